// Tests of master/progress_writer.h: run.json through a run's life, a
// written generation's progress and preview, and a run folder that is gone.
#include "master/progress_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <stdexcept>

#include "common/nn/scores.h"
#include "master/job_status.h"
#include "master/run_directory.h"
#include "master/status_board.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::read_bytes;
using test::TempDir;
using test::write_bytes;
using Clock = ProgressWriter::Clock;

// The toy 2x2 run of tests/mpi in `tmp`, its run folder and board, and a writer.
struct ToyRun {
  explicit ToyRun(const TempDir& tmp, std::int64_t resumed_after = -1) {
    std::string text = read_bytes(std::string(CELLGAN_SOURCE_DIR) + "/tests/mpi/toy-2x2.yaml");
    text = std::regex_replace(text, std::regex("output_dir: .*"), "output_dir: " + tmp.file("run"));
    write_bytes(tmp.file("run.yaml"), text);
    config = load_config(tmp.file("run.yaml"), {});
    dir = std::make_unique<RunDirectory>(config, 4, resumed_after);
    board = make_job_status_board(config, objective_name(config), 2, {1, 1, 2, 2}, t0);
    writer = std::make_unique<ProgressWriter>(config, *dir, *board, LayoutDescription(config.layout), t0,
                                              std::max<std::int64_t>(resumed_after, 0), false);
  }
  RunState state() const { return read_run_state(config.output_dir).value(); }

  const Clock::time_point t0 = Clock::now();
  Config config;
  std::unique_ptr<RunDirectory> dir;
  std::unique_ptr<StatusBoard> board;
  std::unique_ptr<ProgressWriter> writer;
};

// A whole generation of the 2x2 grid; cell 2 scores best and sends a preview.
std::vector<GenerationRecord> generation(std::int64_t g) {
  std::vector<GenerationRecord> records;
  for (int cell = 0; cell < 4; ++cell) {
    GenerationRecord r;
    r.cell = cell;
    r.generation = g;
    r.scores["mode_tvd"] = cell == 2 ? 0.25 : 0.5;
    if (cell == 2) r.preview.assign(2 * 16, 0.5f);
    records.push_back(r);
  }
  return records;
}

TEST(ProgressWriter, RecordsTheRunAsRunningAtTheStartAndItsEndingWithItsCode) {
  TempDir tmp;
  ToyRun t(tmp);
  t.writer->start(2, "cpu", false);
  RunState s = t.state();
  EXPECT_EQ(s.status, "running");
  EXPECT_EQ(s.layout, "coevolution");
  EXPECT_EQ(s.workers, 2);
  EXPECT_EQ(s.rows, 2);
  EXPECT_EQ(s.generations, 4);
  EXPECT_EQ(s.stretches, 1);
  EXPECT_EQ(t.writer->earlier_stretches(), 0);
  t.writer->record("failed", 1, "worker rank 2 failed: out of memory");
  s = t.state();
  EXPECT_EQ(s.status, "failed");
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.message, "worker rank 2 failed: out of memory");
}

TEST(ProgressWriter, AResumedRunCountsItsEarlierStretchesAndSaysHowTheLastEnded) {
  TempDir tmp;
  {
    ToyRun first(tmp);
    first.writer->start(2, "cpu", false);
    first.writer->record("stopped", 75, "signal Terminated");
  }
  const double seconds = read_run_state(tmp.file("run")).value().seconds;
  ToyRun t(tmp, 0);
  t.writer->start(2, "cpu", true);
  EXPECT_EQ(t.state().stretches, 2);
  EXPECT_EQ(t.writer->earlier_stretches(), 1);
  EXPECT_DOUBLE_EQ(t.writer->earlier_seconds(), seconds);
  EXPECT_NE(read_bytes(tmp.file("run/events.log")).find("the previous start ended stopped: signal Terminated"),
            std::string::npos);
}

TEST(ProgressWriter, AWrittenGenerationGoesToRunJsonTheBoardAndAPreviewOfItsBestCell) {
  TempDir tmp;
  ToyRun t(tmp);
  t.writer->start(2, "cpu", false);
  ASSERT_EQ(t.dir->add_records(1, generation(1)), (std::vector<std::int64_t>{1}));
  t.writer->generation_written(1, t.t0 + std::chrono::seconds(2));
  EXPECT_EQ(t.state().generation, 1);
  const StatusSnapshot s = t.board->snapshot(t.t0 + std::chrono::seconds(2));
  EXPECT_EQ(s.generations_done, 1);
  EXPECT_EQ(s.best_cell, 2);
  EXPECT_EQ(s.best_score, 0.25);
  EXPECT_EQ(s.preview_cell, 2);
  EXPECT_TRUE(std::filesystem::exists(tmp.file("run/previews/gen-000001.png")));
}

TEST(ProgressWriter, ARunFolderThatDisappearedIsNoticedAtTheNextRecord) {
  TempDir tmp;
  ToyRun t(tmp);
  t.writer->start(2, "cpu", false);
  std::filesystem::remove_all(tmp.file("run"));
  try {
    t.writer->record("running");
    FAIL() << "a run folder that is gone was not noticed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the run folder can no longer be written"), std::string::npos) << e.what();
  }
}

TEST(ProgressWriter, WritesTheReportAtACheckpointAtMostEveryThirtySeconds) {
  TempDir tmp;
  ToyRun t(tmp);
  t.writer->start(2, "cpu", false);
  const std::string report = tmp.file("run/report.html");
  t.writer->report_at_checkpoint(t.t0);
  ASSERT_TRUE(std::filesystem::exists(report));
  std::filesystem::remove(report);
  t.writer->report_at_checkpoint(t.t0 + ProgressWriter::kReportEvery - std::chrono::seconds(1));
  EXPECT_FALSE(std::filesystem::exists(report));
  t.writer->report_at_checkpoint(t.t0 + ProgressWriter::kReportEvery);
  EXPECT_TRUE(std::filesystem::exists(report));
}

}  // namespace
}  // namespace cellgan
