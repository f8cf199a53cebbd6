// A whole job in one process (a master and W workers on threads): it gives
// the same result, to the bit, as the same job under mpirun, whatever W;
// and when a worker falls silent or fails, or the master fails, every rank
// ends, each with the documented exit code, within the deadlines.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/error.h"
#include "tests/app/job_files.h"
#include "tests/app/one_process_job.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::metrics_without_seconds;
using test::read_bytes;
using test::run_one_process_job;
using test::TempDir;
using test::toy_config;
using test::write_bytes;

TEST(OneProcessJob, GivesTheResultOfTheMpirunJobToTheBitForW124) {
  TempDir tmp;
  // The reference: the same job as real MPI processes (W = 2).
  const std::string reference = tmp.file("mpirun");
  const std::string command = fmt::format(
      "{}OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1 timeout 120 {} {} --oversubscribe --bind-to none -np 3 {} "
      "train {} > {} 2>&1",
      test::these_blas_kernels(), CELLGAN_MPIEXEC, ::geteuid() == 0 ? "--allow-run-as-root" : "", CELLGAN_EXECUTABLE,
      toy_config(tmp, "mpirun", reference), tmp.file("mpirun.log"));
  ASSERT_EQ(std::system(command.c_str()), 0) << read_bytes(tmp.file("mpirun.log"));
  const std::string reference_ensemble = read_bytes(reference + "/ensemble.bin");
  const auto reference_metrics = metrics_without_seconds(reference);
  ASSERT_EQ(reference_metrics.size(), 16u);  // 4 cells x 4 generations

  for (int w : {1, 2, 4}) {
    SCOPED_TRACE("W = " + std::to_string(w));
    const std::string dir = tmp.file("w" + std::to_string(w));
    const auto out = run_one_process_job(toy_config(tmp, "w" + std::to_string(w), dir), w);
    ASSERT_TRUE(out.result.has_value()) << out.master_error;
    EXPECT_EQ(out.worker_codes, std::vector<int>(static_cast<std::size_t>(w), kExitOk));
    EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == reference_ensemble) << "ensemble.bin differs from mpirun's";
    EXPECT_EQ(metrics_without_seconds(dir), reference_metrics);
  }
}

// Short deadlines, and enough generations that the run is still going
// when the fault strikes.
std::map<std::string, std::string> fast_deadlines() {
  return {{"generations: 4", "generations: 400"},
          {"heartbeat_interval_ms: 100", "heartbeat_interval_ms: 50, late_after_ms: 200, dead_after_ms: 600"}};
}
constexpr double kDeadAfter = 0.6;
// The same deadlines for a short run: the master cannot finish it without
// every worker's records, so a silent worker is always found out.
std::map<std::string, std::string> short_run_fast_deadlines() {
  auto replace = fast_deadlines();
  replace["generations: 4"] = "generations: 8";
  return replace;
}
// A short run with deadlines that leave room for a loaded machine (ctest -j2
// on 2 cores): for tests that need a worker lost, but not a tight deadline,
// a rank starved of the cores for a moment is not taken for a dead one.
std::map<std::string, std::string> short_run_loose_deadlines() {
  auto replace = short_run_fast_deadlines();
  replace["heartbeat_interval_ms: 100"] = "heartbeat_interval_ms: 100, late_after_ms: 500, dead_after_ms: 1500";
  return replace;
}

TEST(OneProcessJob, ASilentWorkerIsDeclaredDeadWithinTheDeadlineAndItsCellsAreRehomed) {
  TempDir tmp;
  const std::string reference = tmp.file("reference");
  ASSERT_TRUE(
      run_one_process_job(toy_config(tmp, "reference", reference, short_run_fast_deadlines()), 1).result.has_value());
  const std::string dir = tmp.file("run");
  auto replace = short_run_fast_deadlines();
  replace["runtime: "] = "faults: [{kind: drop-heartbeats, rank: 2, gen: 3}]\nruntime: ";
  const auto out = run_one_process_job(toy_config(tmp, "silent", dir, replace), 2);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_TRUE(out.worker_lost);
  const std::string events = read_bytes(dir + "/events.log");
  // "worker rank 2 dead: silent for S s", with dead_after <= S < dead_after + a few polls.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(events, m, std::regex(R"(worker rank 2 dead: silent for ([0-9.]+) s)"))) << events;
  const double silent = std::stod(m[1].str());
  EXPECT_GE(silent, kDeadAfter);
  EXPECT_LT(silent, kDeadAfter + 0.2);
  EXPECT_NE(events.find("fault planned: drop the heartbeats of worker rank 2 from generation 3"), std::string::npos)
      << events;
  EXPECT_NE(events.find("worker rank 2 late"), std::string::npos) << events;
  EXPECT_NE(events.find("rehoming: workers 1 go on from generation 0"), std::string::npos) << events;
  EXPECT_NE(events.find("assign: worker rank 1 <- cells 0,1,2,3"), std::string::npos) << events;
  // Worker 1 finished the run alone, from the start: the result is the
  // uninterrupted one. Worker 2, never told, ends once the master has been
  // silent to it for its deadline.
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == read_bytes(reference + "/ensemble.bin"));
  EXPECT_EQ(metrics_without_seconds(dir), metrics_without_seconds(reference));
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitOk, kExitFailure}));
  EXPECT_EQ(out.master_lost, (std::vector<bool>{false, true}));
  EXPECT_LT(out.workers_ended_after.count(), 2 * kDeadAfter + 0.5);
}

TEST(OneProcessJob, AWorkerLostAtStartUpIsLeftOutAndTheOthersRunTheJob) {
  TempDir tmp;
  // The others wait for go while the master waits out the lost one.
  auto replace = short_run_loose_deadlines();
  const std::string reference = tmp.file("reference");
  ASSERT_TRUE(
      run_one_process_job(toy_config(tmp, "reference", reference, replace), 1).result.has_value());
  const std::string dir = tmp.file("run");
  Worker::TestHooks vanish;
  vanish.vanish_at_start = true;
  const auto out = run_one_process_job(toy_config(tmp, "vanish", dir, replace), 3, {{2, vanish}});
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  const std::string events = read_bytes(dir + "/events.log");
  EXPECT_NE(events.find("worker rank 2 did not get ready within runtime.dead_after_ms (1500 ms): going on without it"),
            std::string::npos)
      << events;
  EXPECT_NE(events.find("assign: worker rank 3 <- cells"), std::string::npos) << events;
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == read_bytes(reference + "/ensemble.bin"));
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitOk, kExitFailure, kExitOk}));
}

TEST(OneProcessJob, AThrowInAWorkersTrainingStepEndsEveryRank) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const auto out = run_one_process_job(toy_config(tmp, "throw", dir, fast_deadlines()), 3,
                                       {{1, Worker::TestHooks{/*throw_at=*/2}}});
  EXPECT_FALSE(out.result.has_value());
  EXPECT_FALSE(out.worker_lost);
  EXPECT_NE(out.master_error.find("worker rank 1 failed: generation 3: test fault in generation 3"),
            std::string::npos)
      << out.master_error;
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitFailure, kExitFailure, kExitFailure}));
  EXPECT_EQ(out.master_lost, (std::vector<bool>{false, false, false}));
  EXPECT_LT(out.workers_ended_after.count(), kDeadAfter);  // told at once, not by a deadline
  EXPECT_NE(read_bytes(dir + "/events.log").find("worker rank 1 failed"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir + "/result.json"));
}

TEST(OneProcessJob, AWorkerFailingAtStartUpEndsEveryRankBeforeTheCommunicators) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  Worker::TestHooks fault;
  fault.throw_at_start = true;
  const auto out = run_one_process_job(toy_config(tmp, "start-fault", dir, fast_deadlines()), 3, {{2, fault}});
  EXPECT_FALSE(out.result.has_value());
  EXPECT_NE(out.master_error.find("worker rank 2 failed: start-up: test fault at start-up"), std::string::npos)
      << out.master_error;
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitFailure, kExitFailure, kExitFailure}));
  EXPECT_EQ(out.master_lost, (std::vector<bool>{false, false, false}));
  EXPECT_LT(out.workers_ended_after.count(), kDeadAfter);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(OneProcessJob, BadInputEndsEveryWorkerWithTheBadInputCode) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const auto out = run_one_process_job(toy_config(tmp, "bad", dir, {{"rows: 2", "rows: 0"}}), 2);
  EXPECT_NE(out.master_error.find("grid.rows"), std::string::npos) << out.master_error;
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitBadInput, kExitBadInput}));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(OneProcessJob, AnErrorOnTheMasterAfterTheStartEndsEveryWorker) {
  TempDir tmp;
  // metrics.jsonl cannot be written (a folder holds its name): the master
  // fails after it has told the workers to start.
  const std::string dir = tmp.file("run");
  std::filesystem::create_directories(dir + "/metrics.jsonl");
  const auto out = run_one_process_job(toy_config(tmp, "master-error", dir, fast_deadlines()), 2);
  EXPECT_FALSE(out.result.has_value());
  EXPECT_FALSE(out.master_error.empty());
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitFailure, kExitFailure}));
  EXPECT_EQ(out.master_lost, (std::vector<bool>{false, false}));
  EXPECT_LT(out.workers_ended_after.count(), kDeadAfter);
}

// An output_dir that cannot be created (a regular file in its way) is bad
// input found while validating, before any worker starts: every rank ends
// with 2, and nothing is written (it used to be a failure after the start).
TEST(OneProcessJob, AnOutputDirUnderAFileIsBadInputOnEveryRank) {
  TempDir tmp;
  write_bytes(tmp.file("a-file"), "x");
  const auto out =
      run_one_process_job(toy_config(tmp, "under-a-file", tmp.file("a-file") + "/run", fast_deadlines()), 2);
  EXPECT_FALSE(out.result.has_value());
  EXPECT_NE(out.master_error.find("output_dir: '" + tmp.file("a-file") + "/run' cannot be created"), std::string::npos)
      << out.master_error;
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitBadInput, kExitBadInput}));
  EXPECT_EQ(read_bytes(tmp.file("a-file")), "x");
}

// A rehoming goes back to the newest checkpoint that passes its checks:
// the survivors cannot read a corrupt one (before, the run ended with the
// worker's checksum error).
TEST(OneProcessJob, ARehomingSkipsACorruptCheckpoint) {
  TempDir tmp;
  auto replace = short_run_loose_deadlines();
  replace["runtime: "] = "checkpoint: {every: 2}\nruntime: ";
  const std::string reference = tmp.file("reference");
  ASSERT_TRUE(run_one_process_job(toy_config(tmp, "reference", reference, replace), 1).result.has_value());
  replace["runtime: "] =
      "checkpoint: {every: 2}\nfaults: [{kind: corrupt-checkpoint, gen: 4, cell: 1}, "
      "{kind: drop-heartbeats, rank: 2, gen: 6}]\nruntime: ";
  const std::string dir = tmp.file("run");
  const auto out = run_one_process_job(toy_config(tmp, "corrupt", dir, replace), 2);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_TRUE(out.worker_lost);
  const std::string events = read_bytes(dir + "/events.log");
  EXPECT_NE(events.find("rehoming: skipping checkpoint " + dir + "/checkpoints/gen-000004/cell-0001.bin: checksum "
                        "mismatch"),
            std::string::npos)
      << events;
  EXPECT_NE(events.find("rehoming: workers 1 go on from generation 2"), std::string::npos) << events;
  EXPECT_EQ(events.find("incomplete"), std::string::npos) << events;  // newer folders are not candidates
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == read_bytes(reference + "/ensemble.bin"));
  EXPECT_EQ(metrics_without_seconds(dir), metrics_without_seconds(reference));
}

// A worker that saved its cells and was lost before its report reached the
// master: the checkpoint is complete by its cells' records, and the
// rehoming goes back to it, not to the one before.
TEST(OneProcessJob, ARehomingGoesBackToACheckpointWhoseReportWasLost) {
  TempDir tmp;
  auto replace = short_run_loose_deadlines();
  replace["runtime: "] = "checkpoint: {every: 2}\nruntime: ";
  const std::string reference = tmp.file("reference");
  ASSERT_TRUE(run_one_process_job(toy_config(tmp, "reference", reference, replace), 1).result.has_value());
  replace["runtime: "] = "checkpoint: {every: 2}\nfaults: [{kind: drop-heartbeats, rank: 2, gen: 6}]\nruntime: ";
  const std::string dir = tmp.file("run");
  Worker::TestHooks unreported;
  unreported.unreported_checkpoint = 4;
  const auto out = run_one_process_job(toy_config(tmp, "unreported", dir, replace), 2, {{2, unreported}});
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_TRUE(out.worker_lost);
  const std::string events = read_bytes(dir + "/events.log");
  EXPECT_NE(events.find("checkpoint " + dir + "/checkpoints/gen-000004 complete: every cell saved, not every report "
                        "in (the manifest is written from the cells' records)"),
            std::string::npos)
      << events;
  EXPECT_NE(events.find("rehoming: workers 1 go on from generation 4"), std::string::npos) << events;
  EXPECT_EQ(events.find("skipping checkpoint"), std::string::npos) << events;
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == read_bytes(reference + "/ensemble.bin"));
  EXPECT_EQ(metrics_without_seconds(dir), metrics_without_seconds(reference));
}

}  // namespace
}  // namespace cellgan
