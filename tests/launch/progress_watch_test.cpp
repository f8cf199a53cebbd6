// The progress deadline, under a clock of the test's own.
#include "launch/progress_watch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/common/test_files.h"

namespace cellgan::launch {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ProgressWatch, SilenceLongerThanTheFloorIsAStall) {
  const auto t0 = ProgressWatch::Clock::time_point{};
  ProgressWatch watch(seconds(10), t0);
  watch.observe(0, t0 + seconds(5));  // nothing written yet: no progress
  EXPECT_FALSE(watch.stalled(t0 + seconds(10)));
  EXPECT_TRUE(watch.stalled(t0 + seconds(11)));
}

TEST(ProgressWatch, EachChangeRestartsTheClock) {
  const auto t0 = ProgressWatch::Clock::time_point{};
  ProgressWatch watch(seconds(10), t0);
  watch.observe(5, t0 + seconds(1));
  watch.observe(6, t0 + seconds(2));
  watch.observe(6, t0 + seconds(9));  // the same mark: no progress
  EXPECT_FALSE(watch.stalled(t0 + seconds(11)));
  EXPECT_EQ(watch.silent_for(t0 + seconds(11)), seconds(9));
  watch.observe(9, t0 + seconds(11));  // the longest gap is now 9 s: 36 s deadline
  EXPECT_EQ(watch.deadline(), seconds(36));
  EXPECT_FALSE(watch.stalled(t0 + seconds(11 + 36)));
  EXPECT_TRUE(watch.stalled(t0 + seconds(11 + 37)));
}

TEST(ProgressWatch, SlowProgressStretchesTheDeadline) {
  // Generations 30 s apart: the deadline grows to 4 x 30 s, not the floor.
  const auto t0 = ProgressWatch::Clock::time_point{};
  ProgressWatch watch(seconds(10), t0);
  watch.observe(1, t0 + seconds(1));
  watch.observe(2, t0 + seconds(31));
  EXPECT_EQ(watch.deadline(), milliseconds(120000));
  EXPECT_FALSE(watch.stalled(t0 + seconds(31 + 100)));
  EXPECT_TRUE(watch.stalled(t0 + seconds(31 + 121)));
}

TEST(ProgressMark, ChangesWhenEitherFileChanges) {
  test::TempDir dir;
  const std::string run = dir.path().string();
  EXPECT_EQ(progress_mark(run), 0u);
  std::ofstream(dir.path() / "events.log") << "start\n";
  const auto events_only = progress_mark(run);
  EXPECT_NE(events_only, 0u);
  std::ofstream(dir.path() / "metrics.jsonl") << "{}\n";
  const auto both = progress_mark(run);
  EXPECT_NE(both, events_only);
  // A resume rewrites metrics.jsonl shorter while events.log grows.
  std::ofstream(dir.path() / "metrics.jsonl", std::ios::trunc) << "";
  std::ofstream(dir.path() / "events.log", std::ios::app) << "x";
  EXPECT_NE(progress_mark(run), both);
  // run.json touched, its content the same: the master scoring is alive.
  std::ofstream(dir.path() / "run.json") << "{}\n";
  const auto with_state = progress_mark(run);
  fs::last_write_time(dir.path() / "run.json", fs::last_write_time(dir.path() / "run.json") + std::chrono::seconds(5));
  EXPECT_NE(progress_mark(run), with_state);
}

}  // namespace
}  // namespace cellgan::launch
