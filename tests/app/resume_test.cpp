// Stopping and resuming (docs/operations.md, "Faults: what is survived"): a run stopped at any generation and
// resumed, with any number of workers, ends with the ensemble.bin and the
// metrics.jsonl (every field but `seconds`) of the run that never stopped;
// a corrupt newest checkpoint is skipped for the one before; an
// interrupted run's folder is refused without --resume; a bad --resume is
// one line and exit 2; a moved folder resumes where it is; a folder whose
// config.yaml or metrics.jsonl is gone is refused and left as it was. The last test stops a real mpirun job with SIGUSR1.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "common/checkpoint_store.h"
#include "common/error.h"
#include "tests/app/job_files.h"
#include "tests/app/one_process_job.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;
using test::folder_state;
using test::JobOptions;
using test::metrics_without_seconds;
using test::read_bytes;
using test::run_one_process_job;
using test::TempDir;
using test::toy_config;
using test::write_bytes;

// tests/mpi/toy-2x2.yaml for `generations`, checkpointed every 2.
std::string resume_config(const TempDir& tmp, const std::string& name, const std::string& output_dir,
                          int generations = 7) {
  const std::string path =
      toy_config(tmp, name, output_dir, {{"generations: 4", fmt::format("generations: {}", generations)}});
  write_bytes(path, read_bytes(path) + "checkpoint: {every: 2, keep: 2}\n");
  return path;
}

struct Reference {
  std::string ensemble;
  std::vector<std::string> metrics;
};

Reference uninterrupted(const TempDir& tmp, int generations = 7) {
  const std::string dir = tmp.file("reference");
  const auto out = run_one_process_job(resume_config(tmp, "reference", dir, generations), 2);
  if (!out.result) throw std::runtime_error("the reference run failed: " + out.master_error);
  return {read_bytes(dir + "/ensemble.bin"), metrics_without_seconds(dir)};
}

// Stops the run of `config` after `stop_after` generations are written,
// with `workers` workers; expects the stop's exit codes.
void stop_run(const std::string& config, int workers, std::int64_t stop_after) {
  JobOptions stop;
  stop.stop_after = stop_after;
  const auto out = run_one_process_job(config, workers, stop);
  ASSERT_FALSE(out.result.has_value()) << "the run finished instead of stopping";
  EXPECT_EQ(out.master_code, kExitRestart) << out.master_error;
  EXPECT_NE(out.master_error.find("--resume auto"), std::string::npos) << out.master_error;
  EXPECT_EQ(out.worker_codes, std::vector<int>(static_cast<std::size_t>(workers), kExitRestart));
}

TEST(Resume, AStoppedRunResumedWithAnyWorkerCountEndsAsTheUninterruptedOne) {
  TempDir tmp;
  const Reference reference = uninterrupted(tmp);
  ASSERT_EQ(reference.metrics.size(), 28u);  // 4 cells x 7 generations
  // (workers before the stop, workers after, generations written when the stop is asked)
  for (const auto& [before, after, stop_after] : std::vector<std::tuple<int, int, int>>{{1, 2, 1}, {2, 1, 4}}) {
    SCOPED_TRACE(fmt::format("W {} then {}, stop after {}", before, after, stop_after));
    const std::string dir = tmp.file(fmt::format("run-{}-{}", before, after));
    const std::string config = resume_config(tmp, fmt::format("run-{}-{}", before, after), dir);
    stop_run(config, before, stop_after);
    std::vector<std::string> skipped;
    const auto point = newest_complete_checkpoint(dir, skipped);
    ASSERT_TRUE(point.has_value()) << "no complete checkpoint after the stop";
    EXPECT_GT(point->manifest.generation, stop_after);
    EXPECT_LT(point->manifest.generation, 7);
    EXPECT_FALSE(fs::exists(dir + "/result.json"));

    // The folder of an interrupted run is not reused without --resume.
    const auto refused = run_one_process_job(config, after);
    EXPECT_EQ(refused.master_code, kExitBadInput);
    EXPECT_NE(refused.master_error.find("--resume auto"), std::string::npos) << refused.master_error;
    EXPECT_EQ(refused.worker_codes, std::vector<int>(static_cast<std::size_t>(after), kExitBadInput));

    JobOptions resume;
    resume.resume = "auto";
    const auto out = run_one_process_job(config, after, resume);
    ASSERT_TRUE(out.result.has_value()) << out.master_error;
    EXPECT_EQ(out.worker_codes, std::vector<int>(static_cast<std::size_t>(after), kExitOk));
    EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == reference.ensemble) << "ensemble.bin differs";
    EXPECT_EQ(metrics_without_seconds(dir), reference.metrics);
    EXPECT_NE(read_bytes(dir + "/events.log").find("resuming after generation"), std::string::npos);
  }
}

TEST(Resume, ACorruptNewestCheckpointIsSkippedForThePreviousOne) {
  TempDir tmp;
  const Reference reference = uninterrupted(tmp);
  const std::string dir = tmp.file("run");
  const std::string config = resume_config(tmp, "run", dir);
  stop_run(config, 2, 4);  // checkpoints after 4 and after 5 or 6
  std::vector<std::string> skipped;
  const auto newest = newest_complete_checkpoint(dir, skipped);
  ASSERT_TRUE(newest.has_value());
  ASSERT_GT(newest->manifest.generation, 4);
  // One flipped byte in the middle of a cell's file.
  const std::string victim = newest->folder + "/" + newest->manifest.cells[1].name;
  std::string bytes = read_bytes(victim);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
  write_bytes(victim, bytes);

  // Named as the checkpoint to resume from, it is bad input.
  JobOptions exact;
  exact.resume = newest->folder;
  const auto refused = run_one_process_job(config, 2, exact);
  EXPECT_EQ(refused.master_code, kExitBadInput);
  EXPECT_NE(refused.master_error.find("checksum mismatch"), std::string::npos) << refused.master_error;
  EXPECT_NE(refused.master_error.find(newest->manifest.cells[1].name), std::string::npos) << refused.master_error;

  JobOptions resume;
  resume.resume = "auto";
  const auto out = run_one_process_job(config, 2, resume);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  const std::string events = read_bytes(dir + "/events.log");
  EXPECT_NE(events.find("skipping checkpoint"), std::string::npos) << events;
  EXPECT_NE(events.find("resuming after generation 4 "), std::string::npos) << events;
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == reference.ensemble) << "ensemble.bin differs";
  EXPECT_EQ(metrics_without_seconds(dir), reference.metrics);
}

TEST(Resume, BadResumeRequestsAreOneLineAndExit2) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const std::string config = resume_config(tmp, "run", dir, 2);
  // A checkpoint folder given to a run that has none.
  JobOptions missing;
  missing.resume = dir + "/checkpoints/gen-000002";
  auto out = run_one_process_job(config, 1, missing);
  EXPECT_EQ(out.master_code, kExitBadInput);
  EXPECT_NE(out.master_error.find("gen-000002: no such folder: expected auto or a checkpoint folder"),
            std::string::npos)
      << out.master_error;
  EXPECT_FALSE(fs::exists(dir));
  // One that exists, of a folder with no run in it.
  missing.resume = tmp.file("elsewhere");
  fs::create_directories(missing.resume);
  out = run_one_process_job(config, 1, missing);
  EXPECT_EQ(out.master_code, kExitBadInput);
  EXPECT_NE(out.master_error.find("holds no interrupted run"), std::string::npos) << out.master_error;
  EXPECT_FALSE(fs::exists(dir));

  // --resume auto on a new folder starts the run; on a finished one there is nothing to resume.
  JobOptions resume;
  resume.resume = "auto";
  out = run_one_process_job(config, 1, resume);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  out = run_one_process_job(config, 1, resume);
  EXPECT_EQ(out.master_code, kExitBadInput);
  EXPECT_NE(out.master_error.find("finished run"), std::string::npos) << out.master_error;
}

TEST(Resume, AResumedRunMustKeepItsConfiguration) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const std::string config = resume_config(tmp, "run", dir);
  stop_run(config, 1, 1);
  std::string text = read_bytes(config);
  text = std::regex_replace(text, std::regex("seed: 7"), "seed: 8");
  write_bytes(config, text);
  JobOptions resume;
  resume.resume = "auto";
  const auto out = run_one_process_job(config, 1, resume);
  EXPECT_EQ(out.master_code, kExitBadInput);
  EXPECT_NE(out.master_error.find("seed"), std::string::npos) << out.master_error;
}

// A run folder moved (here copied) elsewhere resumes where it now is, to
// the bits of the same run resumed where it was; events.log says where it
// was, and config.yaml where it is.
TEST(Resume, AMovedRunFolderResumesToTheBitsOfTheUnmovedOne) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const std::string config = resume_config(tmp, "run", dir);
  stop_run(config, 2, 2);
  const std::string moved = tmp.file("elsewhere/run");
  fs::create_directories(fs::path(moved).parent_path());
  fs::copy(dir, moved, fs::copy_options::recursive);
  JobOptions resume;
  resume.resume = "auto";
  const auto out = run_one_process_job(resume_config(tmp, "moved", moved), 1, resume);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  const auto unmoved = run_one_process_job(config, 2, resume);
  ASSERT_TRUE(unmoved.result.has_value()) << unmoved.master_error;
  EXPECT_TRUE(read_bytes(moved + "/ensemble.bin") == read_bytes(dir + "/ensemble.bin")) << "ensemble.bin differs";
  EXPECT_EQ(metrics_without_seconds(moved), metrics_without_seconds(dir));
  const std::string events = read_bytes(moved + "/events.log");
  EXPECT_NE(events.find(fmt::format("the run's folder was at '{}' and goes on at '{}'", dir, moved)),
            std::string::npos)
      << events;
  EXPECT_EQ(read_bytes(dir + "/events.log").find("folder was at"), std::string::npos);
  EXPECT_EQ(parse_config(read_bytes(moved + "/config.yaml"), "config.yaml").output_dir, moved);
}

// A folder with a run's records but no config.yaml, or with a metrics.jsonl
// cut short, is refused in one line (exit 2) and left as it was; with the
// files put back it resumes to the run that never stopped.
TEST(Resume, ARunMissingItsConfigOrRecordsIsRefusedAndLeftAsItWas) {
  TempDir tmp;
  const Reference reference = uninterrupted(tmp);
  const std::string dir = tmp.file("run");
  const std::string config = resume_config(tmp, "run", dir);
  stop_run(config, 2, 4);
  const std::string saved_config = read_bytes(dir + "/config.yaml");
  const std::string saved_metrics = read_bytes(dir + "/metrics.jsonl");
  JobOptions resume;
  resume.resume = "auto";
  fs::remove(dir + "/config.yaml");
  auto before = folder_state(dir);
  for (const JobOptions& options : {resume, JobOptions{}}) {
    SCOPED_TRACE("--resume '" + options.resume + "'");
    const auto out = run_one_process_job(config, 2, options);
    EXPECT_EQ(out.master_code, kExitBadInput) << out.master_error;
    EXPECT_NE(out.master_error.find("'" + dir + "' holds records of a run"), std::string::npos) << out.master_error;
    EXPECT_NE(out.master_error.find("not its config.yaml"), std::string::npos) << out.master_error;
    EXPECT_EQ(folder_state(dir), before) << "a refused run changed its folder";
  }
  write_bytes(dir + "/config.yaml", saved_config);
  // metrics.jsonl cut after generation 1 (4 cells).
  std::size_t cut = 0;
  for (int line = 0; line < 4; ++line) cut = saved_metrics.find('\n', cut) + 1;
  write_bytes(dir + "/metrics.jsonl", saved_metrics.substr(0, cut));
  before = folder_state(dir);
  auto out = run_one_process_job(config, 2, resume);
  EXPECT_EQ(out.master_code, kExitBadInput) << out.master_error;
  EXPECT_NE(out.master_error.find("metrics.jsonl' holds generations 1..1 only"), std::string::npos)
      << out.master_error;
  EXPECT_EQ(folder_state(dir), before) << "a refused run changed its folder";

  write_bytes(dir + "/metrics.jsonl", saved_metrics);
  out = run_one_process_job(config, 1, resume);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == reference.ensemble) << "ensemble.bin differs";
  EXPECT_EQ(metrics_without_seconds(dir), reference.metrics);
}

// The real path: SIGUSR1 to mpirun, forwarded to every rank; the master
// stops the run with exit 75, and `--resume auto` with another W finishes it.
TEST(Resume, Sigusr1ToMpirunStopsWithExit75AndTheRunResumesExactly) {
  TempDir tmp;
  const int generations = 24;
  const Reference reference = uninterrupted(tmp, generations);
  const std::string dir = tmp.file("run");
  const std::string config = resume_config(tmp, "run", dir, generations);
  const auto mpirun = [&](int workers, const std::string& extra, const std::string& log) {
    return fmt::format(
        "{}OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1 timeout 120 {} {} --oversubscribe --bind-to none -np {} {} "
        "train {} {} > {} 2>&1",
        test::these_blas_kernels(), CELLGAN_MPIEXEC, ::geteuid() == 0 ? "--allow-run-as-root" : "", workers + 1,
        CELLGAN_EXECUTABLE, config, extra, log);
  };
  const std::string pid_file = tmp.file("mpirun.pid");
  const std::string first = fmt::format("{} & echo $! > {}; wait $!; echo $? > {}", mpirun(2, "", tmp.file("a.log")),
                                        pid_file, tmp.file("a.code"));
  std::thread job([&] { std::system(("bash -c '" + first + "'").c_str()); });
  // Wait until two generations are written, then signal mpirun.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(dir + "/metrics.jsonl") && metrics_without_seconds(dir).size() >= 8 && fs::exists(pid_file)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // timeout(1) runs mpirun as its child: signal the child.
  const std::string pid = read_bytes(pid_file);
  std::system(fmt::format("pkill -USR1 -P {} ; true", pid.substr(0, pid.find('\n'))).c_str());
  job.join();
  ASSERT_EQ(std::stoi(read_bytes(tmp.file("a.code"))), kExitRestart) << read_bytes(tmp.file("a.log"));
  EXPECT_FALSE(fs::exists(dir + "/result.json")) << "the run finished before the signal; make it longer";
  EXPECT_NE(read_bytes(dir + "/events.log").find("stop requested"), std::string::npos);

  ASSERT_EQ(std::system(mpirun(1, "--resume auto", tmp.file("b.log")).c_str()), 0) << read_bytes(tmp.file("b.log"));
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == reference.ensemble) << "ensemble.bin differs";
  EXPECT_EQ(metrics_without_seconds(dir), reference.metrics);
}

// A checkpoint of the trainer of 2af4405, which stepped one individual at a
// time (tests/app/fixtures/toy-2x2-after-4-of-2af4405: this file's
// resume_config() run on 1 worker, killed in generation 5, after its
// checkpoint of generation 4; the kill fault taken out of config.yaml),
// resumes under the stacked trainer: on 1 and on 2 workers it keeps the
// four generations it had, adds the three it lacked, and ends with the
// same bits either way.
TEST(Resume, ACheckpointOfThePerIndividualTrainerResumes) {
  TempDir tmp;
  const std::string fixture = std::string(CELLGAN_SOURCE_DIR) + "/tests/app/fixtures/toy-2x2-after-4-of-2af4405";
  const std::vector<std::string> before = metrics_without_seconds(fixture);
  ASSERT_EQ(before.size(), 16u);  // 4 cells x 4 generations
  std::vector<std::string> ensembles;
  for (const int workers : {1, 2}) {
    const std::string name = fmt::format("w{}", workers);
    const std::string dir = tmp.file(name);
    fs::copy(fixture, dir, fs::copy_options::recursive);
    JobOptions resume;
    resume.resume = "auto";
    const auto out = run_one_process_job(resume_config(tmp, name, dir), workers, resume);
    ASSERT_TRUE(out.result.has_value()) << out.master_error;
    const std::vector<std::string> after = metrics_without_seconds(dir);
    ASSERT_EQ(after.size(), 28u);
    EXPECT_EQ(std::vector<std::string>(after.begin(), after.begin() + 16), before);
    ensembles.push_back(read_bytes(dir + "/ensemble.bin"));
  }
  EXPECT_TRUE(ensembles[0] == ensembles[1]) << "ensemble.bin differs between 1 and 2 workers";
}

}  // namespace
}  // namespace cellgan
