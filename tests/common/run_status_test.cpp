// The one map from exit codes to a run's status (common/run_status.h).
#include "common/run_status.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"

namespace cellgan {
namespace {

TEST(RunStatus, EachExitCodeHasItsStatusWord) {
  EXPECT_EQ(std::string(status_word(status_of(kExitOk))), "finished");
  EXPECT_EQ(std::string(status_word(status_of(kExitRestart))), "stopped");
  for (const int code : {kExitFailure, kExitBadInput, kExitInternal, kExitDiskFull, 137})
    EXPECT_EQ(std::string(status_word(status_of(code))), "failed") << "exit " << code;
  EXPECT_EQ(std::string(status_word(RunStatus::kRunning)), "running");
}

}  // namespace
}  // namespace cellgan
