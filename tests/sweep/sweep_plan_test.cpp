// The plan of a sweep: parsing --grids and --workers, which runs are
// skipped, and the settings each run is given.
#include "sweep/sweep_plan.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace cellgan::sweep {
namespace {

TEST(SweepPlan, ParsesGridsInOrder) {
  const auto grids = parse_grids("1x1,2x3,4x4");
  ASSERT_EQ(grids.size(), 3u);
  EXPECT_EQ(grids[1].rows, 2);
  EXPECT_EQ(grids[1].cols, 3);
  EXPECT_EQ(grids[1].label(), "2x3");
  EXPECT_EQ(grids[2].cells(), 16);
}

TEST(SweepPlan, RejectsBadGridsWithOneLineNamingTheFlag) {
  for (const char* bad : {"2y2", "", "2x", "0x2", "1x1,,2x2", "2x2,2x2", "65x1", "-1x2"}) {
    try {
      parse_grids(bad);
      FAIL() << "accepted --grids " << bad;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--grids"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(SweepPlan, RejectsBadWorkerCounts) {
  EXPECT_EQ(parse_workers("1,2,4"), (std::vector<int>{1, 2, 4}));
  for (const char* bad : {"0", "1,0", "a", "1,1", "", "-2", "1.5", "2000"})
    EXPECT_THROW(parse_workers(bad), InputError) << bad;
}

TEST(SweepPlan, OneRunPerGridWorkerAndSeedWithMisfitsSkipped) {
  Config config;
  config.seed = 5;
  const auto plan = plan_sweep(config, parse_grids("1x1,2x2"), parse_workers("1,2"), 2);
  ASSERT_EQ(plan.size(), 8u);
  EXPECT_EQ(plan[0].name, "g1x1-w1-s5");
  EXPECT_EQ(plan[1].name, "g1x1-w1-s6");
  EXPECT_FALSE(plan[0].skip.has_value());
  // Two workers for one cell do not fit; for four cells they do.
  ASSERT_TRUE(plan[2].skip.has_value());
  EXPECT_NE(plan[2].skip->find("2 worker ranks do not fit a 1x1 grid: expected 1..1"), std::string::npos) << *plan[2].skip;
  EXPECT_FALSE(plan[6].skip.has_value());
  EXPECT_EQ(plan[7].name, "g2x2-w2-s6");
}

TEST(SweepPlan, SettingsOfTheKeysTheSweepSetsAreRejected) {
  EXPECT_NO_THROW(check_sweep_settings({"training.generations=3", "grid.neighbourhood=moore", "seeds=2"}));
  for (const char* bad : {"seed=4", "grid.rows=2", "grid.cols=3", "output_dir=x", "grid={rows: 2}", " seed =4"}) {
    try {
      check_sweep_settings({"training.generations=3", bad});
      FAIL() << "accepted --set " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--set ") + bad), std::string::npos) << e.what();
    }
  }
}

TEST(SweepPlan, RunSettingsNameGridSeedAndFolder) {
  PlannedRun run;
  run.grid = {3, 2};
  run.seed = 9;
  const auto settings = run_settings(run, "/tmp/it's here");
  EXPECT_EQ(settings, (std::vector<std::string>{"grid.rows=3", "grid.cols=2", "seed=9",
                                                "output_dir='/tmp/it''s here'"}));
}

TEST(SweepPlan, RunSettingsAreReadBackByTheConfiguration) {
  PlannedRun run;
  run.grid = {3, 2};
  run.seed = 9;
  const Config c = parse_config(apply_settings("seed: 1\n", run_settings(run, "/tmp/it's: here"), "test"), "test");
  EXPECT_EQ(c.grid.rows, 3);
  EXPECT_EQ(c.grid.cols, 2);
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.output_dir, "/tmp/it's: here");
}

}  // namespace
}  // namespace cellgan::sweep
