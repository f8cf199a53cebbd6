// The logger's preamble: one line ahead of the first, and only if there is one.
#include "common/log.h"

#include <gtest/gtest.h>

#include <string>

namespace cellgan {
namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(LogPreamble, WrittenOnceJustBeforeTheFirstLine) {
  log::set_preamble("blas: the kernels");
  testing::internal::CaptureStderr();
  log::info("first");
  log::warn("second");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(err, "\n"), 3) << err;
  EXPECT_EQ(count(err, "blas: the kernels"), 1) << err;
  const std::string first_line = err.substr(0, err.find('\n'));
  EXPECT_NE(first_line.find("INFO "), std::string::npos) << err;
  EXPECT_NE(first_line.find("blas: the kernels"), std::string::npos) << err;
}

TEST(LogPreamble, NothingWrittenWhenTheProcessSaysNothing) {
  log::set_preamble("blas: the kernels");
  testing::internal::CaptureStderr();
  log::debug("below the level");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");
  log::set_preamble("");
}

}  // namespace
}  // namespace cellgan
