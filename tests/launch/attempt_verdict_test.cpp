// The launcher's exit code and restart rule, case by case.
#include "launch/attempt_verdict.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace cellgan::launch {
namespace {

AttemptEnd ended(std::optional<int> master_code, int launcher_status = 0, bool result = false) {
  AttemptEnd end;
  end.master_code = master_code;
  end.launcher_status = launcher_status;
  end.result_written = result;
  return end;
}

TEST(AttemptVerdict, FinishedOnlyWithTheMastersZeroAndAResult) {
  const Verdict v = judge(ended(kExitOk, 0, true));
  EXPECT_FALSE(v.restart);
  EXPECT_EQ(v.exit_code, kExitOk);
}

TEST(AttemptVerdict, MpirunsZeroWithoutTheMastersCodeIsNoSuccess) {
  // mpirun --enable-recovery exits 0 whatever happened.
  const Verdict v = judge(ended(std::nullopt, 0, false));
  EXPECT_TRUE(v.restart);
  EXPECT_NE(v.exit_code, kExitOk);
  EXPECT_NE(v.cause.find("without an exit code (mpirun/srun exited 0)"), std::string::npos) << v.cause;
}

TEST(AttemptVerdict, TheMastersZeroWithoutResultIsRestarted) {
  const Verdict v = judge(ended(kExitOk, 0, false));
  EXPECT_TRUE(v.restart);
  EXPECT_EQ(v.exit_code, kExitFailure);
}

TEST(AttemptVerdict, BadInputAndBugsAreFinal) {
  for (const int code : {kExitBadInput, kExitInternal}) {
    const Verdict v = judge(ended(code, 0));
    EXPECT_FALSE(v.restart) << code;
    EXPECT_EQ(v.exit_code, code);
  }
}

TEST(AttemptVerdict, AFullDiskIsFinal) {
  // A restart would meet the same full disk: said once, with its own code.
  const Verdict v = judge(ended(kExitDiskFull, 0));
  EXPECT_FALSE(v.restart);
  EXPECT_EQ(v.exit_code, kExitDiskFull);
  EXPECT_NE(v.cause.find("the disk is full"), std::string::npos) << v.cause;
}

TEST(AttemptVerdict, StopsFailuresAndDeathsAreRestarted) {
  EXPECT_TRUE(judge(ended(kExitRestart)).restart);
  EXPECT_EQ(judge(ended(kExitRestart)).exit_code, kExitRestart);
  // 75 also after a worker lost before any checkpoint: not said to have one.
  EXPECT_EQ(judge(ended(kExitRestart)).cause, "the run stopped, to be resumed (exit 75)");
  EXPECT_TRUE(judge(ended(kExitFailure, 1)).restart);
  const Verdict killed = judge(ended(std::nullopt, 137));
  EXPECT_TRUE(killed.restart);
  EXPECT_NE(killed.cause.find("signal 9"), std::string::npos) << killed.cause;
}

TEST(AttemptVerdict, AStallIsRestartedWhateverTheCodes) {
  AttemptEnd end = ended(std::nullopt, 143);
  end.stall = "no progress for 20 s";
  const Verdict v = judge(end);
  EXPECT_TRUE(v.restart);
  EXPECT_EQ(v.cause, "no progress for 20 s");
}

TEST(AttemptVerdict, AUserStopIsNeverRestarted) {
  AttemptEnd end = ended(kExitRestart);
  end.stop_requested = true;
  EXPECT_FALSE(judge(end).restart);
  EXPECT_EQ(judge(end).exit_code, kExitRestart);
  end.master_code.reset();
  end.stall = "no progress";
  EXPECT_FALSE(judge(end).restart);
  EXPECT_EQ(judge(end).exit_code, 130);
  // Before the run wrote anything: ended at once, nothing lost.
  end.stall.clear();
  end.before_start = true;
  EXPECT_FALSE(judge(end).restart);
  EXPECT_EQ(judge(end).exit_code, kExitRestart);
  // A run that finished before the stop took effect is still a success.
  EXPECT_EQ(judge(ended(kExitOk, 0, true)).exit_code, kExitOk);
}

}  // namespace
}  // namespace cellgan::launch
