// Tests of master/resume_plan.h on run folders made by hand: a folder with
// a run's records but no config.yaml is never a new run, metrics.jsonl
// must hold every generation a resume goes on from, and a folder moved
// elsewhere is still its run. Every refusal leaves the folder as it was.
#include "master/resume_plan.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/checkpoint_store.h"
#include "common/config.h"
#include "common/error.h"
#include "common/run_files.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;
using test::folder_state;
using test::input_error_of;
using test::TempDir;
using test::write_bytes;

constexpr int kCells = 2;  // a 1x2 grid: two records a generation

Config config_in(const std::string& output_dir) {
  Config c;
  c.source = "configs/test.yaml";
  c.output_dir = output_dir;
  c.grid.rows = 1;
  c.grid.cols = kCells;
  c.training.generations = 10;
  return c;
}

std::string metrics_lines(std::int64_t generations) {
  std::string text;
  for (std::int64_t g = 1; g <= generations; ++g)
    for (int cell = 0; cell < kCells; ++cell) text += fmt::format("{{\"generation\":{},\"cell\":{}}}\n", g, cell);
  return text;
}

// An interrupted run of `saved` in `dir`: config.yaml, metrics.jsonl through
// `generations`, events.log, and complete checkpoints at `checkpoints`.
void write_interrupted_run(const std::string& dir, const Config& saved, std::int64_t generations,
                           const std::vector<std::int64_t>& checkpoints) {
  fs::create_directories(dir);
  write_bytes(dir + "/" + run_files::kConfig, to_yaml(saved));
  write_bytes(dir + "/" + run_files::kMetrics, metrics_lines(generations));
  write_bytes(dir + "/" + run_files::kEvents, "2024-01-01T00:00:00 stop requested\n");
  for (std::int64_t g : checkpoints) {
    const std::string folder = checkpoint_folder(dir, g);
    CheckpointManifest m{g, saved.seed, saved.grid.rows, saved.grid.cols, {}};
    for (int cell = 0; cell < kCells; ++cell)
      m.cells.push_back(write_cell_checkpoint(folder, CheckpointId{g, saved.seed, saved.grid.rows, saved.grid.cols}, cell,
                                              Bytes(16, static_cast<std::uint8_t>(g + cell))));
    write_manifest(folder, m);
  }
}

bool has_note(const ResumePlan& plan, const std::string& text) {
  return std::any_of(plan.notes.begin(), plan.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(PlanResume, RecordsOfARunWithoutItsConfigAreNeverANewRun) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const Config config = config_in(dir);
  write_interrupted_run(dir, config, 5, {4});
  fs::remove(dir + "/config.yaml");
  const auto before = folder_state(dir);
  for (const std::string resume : {"", "auto"}) {
    SCOPED_TRACE("--resume '" + resume + "'");
    const std::string message = input_error_of([&] { plan_resume(config, resume, kCells); });
    EXPECT_NE(message.find("'" + dir + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("checkpoints, metrics.jsonl, events.log"), std::string::npos) << message;
    EXPECT_NE(message.find("not its config.yaml"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(folder_state(dir), before) << "a refusal changed the folder";
  }
  // A folder holding only a run.lock (a job that ended before writing) is new.
  const std::string locked = tmp.file("locked");
  fs::create_directories(locked);
  write_bytes(locked + "/run.lock", "1@host\n");
  EXPECT_TRUE(has_note(plan_resume(config_in(locked), "auto", kCells), "starting a new one"));
}

TEST(PlanResume, AMetricsFileCutShortIsRefusedNamingTheGenerationsMissing) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const Config config = config_in(dir);
  write_interrupted_run(dir, config, 6, {2, 4, 6});
  // Cut in generation 5: one of its two lines, and half a line of generation 6.
  write_bytes(dir + "/metrics.jsonl", metrics_lines(4) + "{\"generation\":5,\"cell\":0}\n{\"generation\":6,\"ce");
  const auto before = folder_state(dir);
  std::string message = input_error_of([&] { plan_resume(config, "auto", kCells); });
  EXPECT_EQ(message, fmt::format("--resume auto: '{0}/metrics.jsonl' holds generations 1..4 only, but the checkpoint "
                                 "{0}/checkpoints/gen-000006 is of generation 6: the records of generations 5..6 are "
                                 "missing; put the file back, or resume from a checkpoint it covers: --resume "
                                 "{0}/checkpoints/gen-000004",
                                 dir));
  EXPECT_EQ(folder_state(dir), before) << "a refusal changed the folder";
  // The checkpoint it names resumes.
  const ResumePlan plan = plan_resume(config, checkpoint_folder(dir, 4), kCells);
  EXPECT_TRUE(plan.resuming);
  EXPECT_EQ(plan.generation, 4);

  fs::remove(dir + "/metrics.jsonl");
  message = input_error_of([&] { plan_resume(config, "auto", kCells); });
  EXPECT_NE(message.find("metrics.jsonl' is missing"), std::string::npos) << message;
  EXPECT_NE(message.find("generations 1..6 are missing"), std::string::npos) << message;
  EXPECT_NE(message.find("start a new run in another output_dir"), std::string::npos) << message;
  message = input_error_of([&] { plan_resume(config, checkpoint_folder(dir, 2), kCells); });
  EXPECT_NE(message.find("generations 1..2 are missing"), std::string::npos) << message;
}

// A line in the middle that is not a record is named (not only the
// generations it leaves short).
TEST(PlanResume, ALineOfMetricsThatIsNotARecordIsNamed) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const Config config = config_in(dir);
  write_interrupted_run(dir, config, 6, {2, 4, 6});
  std::string lines = metrics_lines(6);
  const std::size_t ninth = [&] {  // where line 9 (generation 5, cell 0) starts
    std::size_t at = 0;
    for (int i = 0; i < 8; ++i) at = lines.find('\n', at) + 1;
    return at;
  }();
  lines.replace(ninth, lines.find('\n', ninth) - ninth, "garbage");
  write_bytes(dir + "/metrics.jsonl", lines);
  const std::string message = input_error_of([&] { plan_resume(config, "auto", kCells); });
  EXPECT_NE(message.find("metrics.jsonl' holds generations 1..4 only (its line 9 is not a metrics record), but the "
                         "checkpoint"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("--resume " + checkpoint_folder(dir, 4)), std::string::npos) << message;
}

// Every checkpoint unreadable: --resume auto starts again from generation
// 0, and says so as a warning (the generations done are lost).
TEST(PlanResume, EveryCheckpointUnreadableStartsAgainWithAWarning) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const Config config = config_in(dir);
  write_interrupted_run(dir, config, 4, {2, 4});
  for (std::int64_t g : {2, 4}) write_bytes(checkpoint_folder(dir, g) + "/" + run_files::kManifest, "not json");
  const ResumePlan plan = plan_resume(config, "auto", kCells);
  EXPECT_TRUE(plan.resuming);
  EXPECT_EQ(plan.generation, 0);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0], "no checkpoint of the run can be resumed (2 skipped, incomplete or unreadable): "
                              "starting again from generation 0, so the generations done are trained again");
  EXPECT_TRUE(has_note(plan, "skipping checkpoint")) << "each checkpoint skipped is named";
}

TEST(PlanResume, AMovedFolderIsTheRunWhereItNowIs) {
  TempDir tmp;
  const std::string was_at = tmp.file("cluster-a/run");
  const std::string dir = tmp.file("cluster-b/run");
  write_interrupted_run(dir, config_in(was_at), 4, {4});
  const ResumePlan plan = plan_resume(config_in(dir), "auto", kCells);
  EXPECT_TRUE(plan.resuming);
  EXPECT_EQ(plan.generation, 4);
  EXPECT_EQ(plan.folder, checkpoint_folder(dir, 4));
  EXPECT_TRUE(has_note(plan, fmt::format("the run's folder was at '{}' and goes on at '{}'", was_at, dir)));
  // Where it has not moved, nothing is said.
  const std::string home = tmp.file("home/run");
  write_interrupted_run(home, config_in(home), 4, {4});
  EXPECT_FALSE(has_note(plan_resume(config_in(home), "auto", kCells), "was at"));
  // Moved or not, any other key must stay.
  Config other = config_in(dir);
  other.seed = 2;
  const std::string message = input_error_of([&] { plan_resume(other, "auto", kCells); });
  EXPECT_NE(message.find("seed (the run's 1 vs 2 in this file)"), std::string::npos) << message;
  EXPECT_NE(message.find("only output_dir, runtime.*"), std::string::npos) << message;
}

}  // namespace
}  // namespace cellgan
