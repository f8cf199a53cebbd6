// Gradient values on the wire (see wire_precision.h).
#include "worker/wire_precision.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cstring>
#include <stdexcept>

#include <fmt/core.h>

namespace cellgan {
namespace {

template <typename Wire>
void encode_as(const float* values, std::size_t count, std::uint8_t* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const Wire w(values[i]);
    std::memcpy(out + i * sizeof(Wire), &w, sizeof(Wire));
  }
}

template <typename Wire, typename Apply>
void decode_as(const std::uint8_t* in, std::size_t count, float* out, Apply apply) {
  for (std::size_t i = 0; i < count; ++i) {
    Wire w;
    std::memcpy(&w, in + i * sizeof(Wire), sizeof(Wire));
    apply(out[i], static_cast<float>(w));
  }
}

template <typename Apply>
void decode_with(WireCompression compression, const Bytes& bytes, float* out, std::size_t count, Apply apply) {
  if (bytes.size() != count * wire_bytes_per_value(compression))
    throw std::logic_error(fmt::format("gradient message of {} bytes: expected {} values of {} bytes", bytes.size(),
                                       count, wire_bytes_per_value(compression)));
  switch (compression) {
    case WireCompression::kNone: return decode_as<float>(bytes.data(), count, out, apply);
    case WireCompression::kFp16: return decode_as<c10::Half>(bytes.data(), count, out, apply);
    case WireCompression::kBf16: return decode_as<c10::BFloat16>(bytes.data(), count, out, apply);
  }
}

}  // namespace

std::size_t wire_bytes_per_value(WireCompression compression) {
  return compression == WireCompression::kNone ? sizeof(float) : 2;
}

Bytes encode_wire(WireCompression compression, const float* values, std::size_t count) {
  Bytes out(count * wire_bytes_per_value(compression));
  switch (compression) {
    case WireCompression::kNone: encode_as<float>(values, count, out.data()); break;
    case WireCompression::kFp16: encode_as<c10::Half>(values, count, out.data()); break;
    case WireCompression::kBf16: encode_as<c10::BFloat16>(values, count, out.data()); break;
  }
  return out;
}

void decode_wire(WireCompression compression, const Bytes& bytes, float* out, std::size_t count) {
  decode_with(compression, bytes, out, count, [](float& o, float v) { o = v; });
}

void add_wire(WireCompression compression, const Bytes& bytes, float* out, std::size_t count) {
  decode_with(compression, bytes, out, count, [](float& o, float v) { o += v; });
}

void round_to_wire(WireCompression compression, float* values, std::size_t count) {
  switch (compression) {
    case WireCompression::kNone: return;
    case WireCompression::kFp16:
      for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(c10::Half(values[i]));
      return;
    case WireCompression::kBf16:
      for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(c10::BFloat16(values[i]));
      return;
  }
}

}  // namespace cellgan
