// The plan of a sweep: parsing --grids and --workers, which runs are
// skipped, and the settings each run is given.
#include "sweep/sweep_plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/config.h"
#include "common/error.h"
#include "common/run_files.h"
#include "tests/common/test_files.h"

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

TEST(SweepPlan, VaryCrossesEveryValueWithTheRestAndNamesTheFolders) {
  Config config;
  config.grid.rows = config.grid.cols = 2;
  const auto plan = plan_sweep(config, {}, {}, 1,
                               {parse_vary("training.batch_size=32, 64"), parse_vary("training.learning_rate=1e-3,2e-4")});
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].name, "g2x2-w4-s1-batch_size32-learning_rate1e_3") << "W: one per cell by default";
  EXPECT_EQ(plan[3].name, "g2x2-w4-s1-batch_size64-learning_rate2e_4");
  const auto settings = run_settings(plan[1], "/out");
  EXPECT_EQ(settings, (std::vector<std::string>{"grid.rows=2", "grid.cols=2", "seed=1", "training.batch_size=32",
                                                "training.learning_rate=2e-4", "output_dir='/out'"}));
  EXPECT_THROW(parse_vary("training.batch_size"), InputError);
  EXPECT_THROW(parse_vary("training.batch_size=32,32"), InputError);
  EXPECT_THROW(parse_vary("training.learning_rate=1e-3,0.001"), InputError) << "the same number twice";
  EXPECT_THROW(parse_vary("=1,2"), InputError);
  EXPECT_THROW(check_sweep_settings({}, {parse_vary("seed=1,2")}), InputError);
  EXPECT_THROW(check_sweep_settings({"training.batch_size=8"}, {parse_vary("training.batch_size=1,2")}), InputError);
  EXPECT_THROW(plan_sweep(config, {}, {}, 1, {parse_vary("data.x=a b,a_b")}), InputError) << "one folder name for two runs";
}

TEST(SweepPlan, WhatTheConfigurationRefusesIsSkippedWithItsWords) {
  Config config;
  config.layout = LayoutKind::kDataParallel;
  EXPECT_THROW(plan_sweep(config, {}, {}, 1), InputError) << "data_parallel has no natural W";
  const ConfigLoader load = [](const std::vector<std::string>& settings) {
    for (const std::string& s : settings)
      if (s == "grid.rows=2") throw InputError("base.yaml: grid: 2x2 is out of range for layout data_parallel");
    Config c;
    c.layout = LayoutKind::kDataParallel;
    return c;
  };
  const auto plan = plan_sweep(config, parse_grids("1x1,2x2"), parse_workers("1,2"), 1, {}, load);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_FALSE(plan[0].skip);
  EXPECT_FALSE(plan[1].skip) << "data_parallel sweeps W";
  ASSERT_TRUE(plan[2].skip);
  EXPECT_EQ(*plan[2].skip, "base.yaml: grid: 2x2 is out of range for layout data_parallel");
}

// A --vary value the configuration refuses in every run that has it is a
// typo, refused at once with its words; refused in some runs only (with a
// grid), it is skipped there; every run refused is the caller's to say.
TEST(SweepPlan, AVaryValueRefusedInEveryRunIsAnError) {
  Config config;
  const ConfigLoader load = [](const std::vector<std::string>& settings) {
    bool big = false, zero = false;
    for (const std::string& s : settings) {
      big = big || s == "grid.rows=2";
      zero = zero || s == "training.batch_size=0";
    }
    if (zero) throw InputError("base.yaml: training.batch_size: 0 is out of range: expected 1..100000");
    if (big) throw InputError("base.yaml: grid: 2x2 is out of range for this test");
    return Config();
  };
  try {
    plan_sweep(config, parse_grids("1x1"), parse_workers("1"), 1, {parse_vary("training.batch_size=50,0")}, load);
    FAIL() << "a batch size of 0 was planned";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "cellgan sweep: --vary training.batch_size=0: refused in every run: base.yaml: "
                                     "training.batch_size: 0 is out of range: expected 1..100000");
  }
  const auto plan =
      plan_sweep(config, parse_grids("1x1,2x2"), parse_workers("1"), 1, {parse_vary("training.batch_size=50,60")}, load);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_FALSE(plan[0].skip);
  EXPECT_TRUE(plan[2].skip && plan[2].refused_by_config);
  const auto none = plan_sweep(config, parse_grids("2x2"), parse_workers("1"), 1,
                               {parse_vary("training.batch_size=50,60")}, load);
  EXPECT_TRUE(none[0].skip && none[1].skip) << "every run refused: planned, for the caller to refuse";
}

// A run folder made by another command is named with its first difference;
// how a run is run may differ, and training.generations while unfinished.
TEST(SweepPlan, ARunFolderMadeOtherwiseIsNamedWithItsFirstDifference) {
  const test::TempDir tmp;
  const std::filesystem::path folder = tmp.path();
  Config made;
  made.training.generations = 3;
  made.output_dir = folder.string();
  const auto planned_with = [](std::int64_t generations, const std::string& device) {
    return [generations, device](const std::vector<std::string>&) {
      Config c;
      c.training.generations = generations;
      c.runtime.device = device;
      c.output_dir = "elsewhere";
      return c;
    };
  };
  PlannedRun run;
  EXPECT_FALSE(made_otherwise(run, folder.string(), planned_with(5, "cpu"))) << "no config.yaml: a new run";
  std::ofstream(folder / run_files::kConfig) << to_yaml(made);
  EXPECT_FALSE(made_otherwise(run, folder.string(), planned_with(3, "cpu")));
  EXPECT_FALSE(made_otherwise(run, folder.string(), planned_with(3, "cuda")));
  EXPECT_FALSE(made_otherwise(run, folder.string(), planned_with(5, "cpu"))) << "unfinished: resumes to 5";
  std::ofstream(folder / run_files::kResult) << "{}";
  EXPECT_EQ(made_otherwise(run, folder.string(), planned_with(5, "cpu")),
            "training.generations: 3 in the run, 5 in this sweep");
}

}  // namespace
}  // namespace cellgan::sweep
