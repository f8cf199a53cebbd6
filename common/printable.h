// Input echoed in a message, made safe to print: a configuration file or a
// --set value may hold any bytes, and an error line must stay one line of
// text that a terminal shows as it is.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace cellgan {

// `text` with every byte that is not part of printable UTF-8 written as
// \xNN (two upper-case hex digits): control characters (newline and tab
// included), DEL, the C1 controls U+0080..U+009F, and every byte of no
// valid UTF-8 sequence (a stray continuation byte, an overlong form, a
// surrogate, a code point above U+10FFFF, a sequence cut short). Printable
// ASCII and valid UTF-8 (é, ×, σ) are kept. printable(printable(t)) ==
// printable(t).
std::string printable(std::string_view text);

}  // namespace cellgan
