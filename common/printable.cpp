// Escaping the bytes of echoed input that are not printable UTF-8 (see printable.h).
#include "common/printable.h"

#include <fmt/format.h>

namespace cellgan {
namespace {

// The length of the valid UTF-8 sequence of a printable character that
// starts at text[at], or 0 when there is none (RFC 3629's table: no
// overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t printable_sequence(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead >= 0x20 && lead < 0x7f) return 1;
  std::size_t length = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) lo = 0xa0;  // no overlong form
    if (lead == 0xed) hi = 0x9f;  // no surrogate
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) lo = 0x90;  // no overlong form
    if (lead == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;  // a control character, DEL, a continuation byte or a byte UTF-8 never uses
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < lo || byte(at + 1) > hi) return 0;
  for (std::size_t i = at + 2; i < at + length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  if (lead == 0xc2 && byte(at + 1) <= 0x9f) return 0;  // a C1 control, U+0080..U+009F
  return length;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    if (const std::size_t length = printable_sequence(text, at)) {
      out.append(text.substr(at, length));
      at += length;
    } else {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[at]));
      ++at;
    }
  }
  return out;
}

}  // namespace cellgan
