// Tests of common/printable.h: what an echoed input keeps and what it
// writes as \xNN.
#include "common/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace cellgan {
namespace {

TEST(Printable, PrintableAsciiAndUtf8AreKept) {
  EXPECT_EQ(printable("training.loss: 'hinge'"), "training.loss: 'hinge'");
  EXPECT_EQ(printable("\xc3\xa9 \xc3\x97 \xcf\x83 \xe2\x82\xac \xf0\x9f\x98\x80"), "\xc3\xa9 \xc3\x97 \xcf\x83 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, ControlCharactersAndDelAreEscaped) {
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\x0Ab\\x09c\\x0Dd");
  EXPECT_EQ(printable("\x1b[31mred"), "\\x1B[31mred");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x7f"), "\\x7F");
  EXPECT_EQ(printable("\xc2\x85"), "\\xC2\\x85") << "U+0085, a C1 control";
}

TEST(Printable, BytesOfNoValidUtf8SequenceAreEscaped) {
  EXPECT_EQ(printable("\xff\xfe"), "\\xFF\\xFE");
  EXPECT_EQ(printable("\x80"), "\\x80") << "a stray continuation byte";
  EXPECT_EQ(printable("\xc0\xaf"), "\\xC0\\xAF") << "an overlong '/'";
  EXPECT_EQ(printable("\xe0\x80\xaf"), "\\xE0\\x80\\xAF") << "an overlong '/' in three bytes";
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xED\\xA0\\x80") << "a surrogate";
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80") << "above U+10FFFF";
  EXPECT_EQ(printable("ab\xc3"), "ab\\xC3") << "a sequence cut short";
  EXPECT_EQ(printable("\xc3(x"), "\\xC3(x");
}

TEST(Printable, EscapingTwiceIsEscapingOnce) {
  const std::string once = printable("\xff\x01 \xc3\xa9 \\x41");
  EXPECT_EQ(printable(once), once);
}

}  // namespace
}  // namespace cellgan
