// Whole data-parallel jobs (layout data_parallel) in one process: a run
// ends with the same files as a coevolution run plus layout.json, and a
// metrics line per generation that carries the losses, the compute and
// communication seconds and the bytes all-reduced per step; a run stopped
// and resumed ends with the bits of the run that never stopped.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>
#include <sstream>

#include "common/checkpoint_store.h"
#include "common/error.h"
#include "tests/app/job_files.h"
#include "tests/app/one_process_job.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;
using test::JobOptions;
using test::metrics_without_seconds;
using test::read_bytes;
using test::run_one_process_job;
using test::TempDir;
using test::write_bytes;

constexpr int kGenerations = 5;

std::string dp_config(const TempDir& tmp, const std::string& name, const std::string& output_dir,
                      const std::string& allreduce = "ring", int generations = kGenerations) {
  const std::string path = tmp.file(name + ".yaml");
  write_bytes(path, fmt::format("seed: 3\noutput_dir: {}\nlayout: data_parallel\n"
                                "data: {{dataset: ring, toy_samples: 2000}}\n"
                                "network: {{kind: toy, latent_dim: 8, toy_hidden: 32}}\ngrid: {{rows: 1, cols: 1}}\n"
                                "training: {{generations: {}, batch_size: 32, batches_per_generation: 10, "
                                "score_samples: 200, learning_rate: 1.0e-3}}\n"
                                "evaluation: {{final_samples: 1000, preview_every: 2}}\n"
                                "runtime: {{heartbeat_interval_ms: 100}}\ncheckpoint: {{every: 2, keep: 2}}\n"
                                "data_parallel: {{allreduce: {}, fusion_bytes: 2048}}\n",
                                output_dir, generations, allreduce));
  return path;
}

TEST(DataParallelJob, RunsToTheEndWithTheRunFilesAndAMetricsLinePerGeneration) {
  TempDir tmp;
  for (const std::string allreduce : {"ring", "mpi"}) {
    SCOPED_TRACE(allreduce);
    const std::string dir = tmp.file("run-" + allreduce);
    const auto out = run_one_process_job(dp_config(tmp, "dp-" + allreduce, dir, allreduce), 2);
    ASSERT_TRUE(out.result.has_value()) << out.master_error;
    EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitOk, kExitOk}));
    EXPECT_EQ(out.result->best, "the replicas' generator") << "one model, named as such";
    EXPECT_TRUE(out.result->scores.count("mode_tvd"));
    for (const char* name : {"ensemble.bin", "samples.png", "result.json", "summary.txt", "layout.json"})
      EXPECT_TRUE(fs::exists(dir + "/" + name)) << name;
    // summary.txt says it as the layout is: one pair, its files as they are.
    const std::string summary = read_bytes(dir + "/summary.txt");
    EXPECT_NE(summary.find("grid         1x1 (one replicated pair)"), std::string::npos) << summary;
    EXPECT_NE(summary.find("best         the replicas' generator"), std::string::npos) << summary;
    EXPECT_NE(summary.find(" layout.json "), std::string::npos) << summary;
    EXPECT_EQ(summary.find("previews/") != std::string::npos, fs::exists(dir + "/previews"))
        << "previews/ listed when, and only when, it exists";
    const auto layout = nlohmann::json::parse(read_bytes(dir + "/layout.json"));
    EXPECT_EQ(layout.at("allreduce"), allreduce);
    EXPECT_EQ(layout.at("workers"), 2);

    std::istringstream lines(read_bytes(dir + "/metrics.jsonl"));
    int count = 0;
    for (std::string line; std::getline(lines, line); ++count) {
      const auto j = nlohmann::json::parse(line);
      EXPECT_EQ(j.at("generation"), count + 1);
      EXPECT_TRUE(std::isfinite(j.at("generator_loss").get<double>()));
      EXPECT_GT(j.at("seconds").at("compute").get<double>(), 0.0);
      EXPECT_TRUE(j.at("seconds").contains("communicate"));
      EXPECT_GT(j.at("counts").at("allreduce_bytes_per_step").get<double>(), 0.0);
      EXPECT_EQ(j.at("counts").at("workers"), 2);
      EXPECT_EQ(j.at("scores").contains("mode_tvd"), (count + 1) % 2 == 0 || count + 1 == kGenerations) << line;
    }
    EXPECT_EQ(count, kGenerations);
    EXPECT_TRUE(fs::exists(dir + "/previews/gen-000002.png"));
  }
}

TEST(DataParallelJob, AStoppedRunResumedEndsAsTheUninterruptedOne) {
  TempDir tmp;
  const std::string reference_dir = tmp.file("reference");
  ASSERT_TRUE(run_one_process_job(dp_config(tmp, "reference", reference_dir), 2).result.has_value());

  const std::string dir = tmp.file("run");
  const std::string config = dp_config(tmp, "run", dir);
  JobOptions stop;
  stop.stop_after = 1;
  const auto stopped = run_one_process_job(config, 2, stop);
  ASSERT_FALSE(stopped.result.has_value()) << "the run finished instead of stopping";
  EXPECT_EQ(stopped.master_code, kExitRestart) << stopped.master_error;
  std::vector<std::string> skipped;
  const auto point = newest_complete_checkpoint(dir, skipped);
  ASSERT_TRUE(point.has_value()) << "no complete checkpoint after the stop";
  EXPECT_EQ(point->manifest.cells.size(), 1u);

  JobOptions resume;
  resume.resume = "auto";
  const auto out = run_one_process_job(config, 2, resume);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == read_bytes(reference_dir + "/ensemble.bin"))
      << "ensemble.bin differs";
  EXPECT_EQ(metrics_without_seconds(dir), metrics_without_seconds(reference_dir));
}

// A lost worker: the survivors go on from the last checkpoint with the
// global batches split between them (the ring over two instead of three).
TEST(DataParallelJob, AfterALostWorkerTheSurvivorsGoOnFromTheCheckpoint) {
  TempDir tmp;
  const std::string dir = tmp.file("lost");
  constexpr int kLonger = 10;
  const std::string path = dp_config(tmp, "lost", dir, "ring", kLonger);
  std::string text = read_bytes(path);
  text.replace(text.find("heartbeat_interval_ms: 100"), 26,
               "heartbeat_interval_ms: 50, late_after_ms: 200, dead_after_ms: 600");
  // Worker 1 takes 40 ms a step (the others wait for it), so the run lasts
  // long enough for the master to find worker 3 silent from generation 4.
  write_bytes(path, text + "faults: [{kind: drop-heartbeats, rank: 3, gen: 4}, {kind: delay, rank: 1, ms: 40}]\n");
  const auto out = run_one_process_job(path, 3);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_TRUE(out.worker_lost);
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitOk, kExitOk, kExitFailure}));
  const std::string events = read_bytes(dir + "/events.log");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(events, m, std::regex(R"(rehoming: workers 1,2 go on from generation ([0-9]+))")))
      << events;
  const int from = std::stoi(m[1].str());
  EXPECT_GE(from, 2);
  EXPECT_NE(events.find("reassign: data_parallel, 2 replicas, global batch 64"), std::string::npos) << events;
  EXPECT_TRUE(fs::exists(dir + "/ensemble.bin"));
  // A generation's record is its first completion: three replicas up to
  // the checkpoint, and after it until the loss was noticed (the master
  // keeps those and ignores the survivors' repeats), then two.
  std::istringstream lines(read_bytes(dir + "/metrics.jsonl"));
  int count = 0;
  int previous = 3;
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    const int workers = j.at("counts").at("workers").get<int>();
    if (++count <= from) {
      EXPECT_EQ(workers, 3) << line;
    }
    EXPECT_TRUE(workers == 2 || workers == 3) << line;
    EXPECT_LE(workers, previous) << "three replicas again after two: " << line;
    previous = workers;
  }
  EXPECT_EQ(previous, 2) << "the last generation was not the survivors'";
  EXPECT_EQ(count, kLonger);
}

TEST(DataParallelJob, StrongScalingNeedsARowPerWorker) {
  TempDir tmp;
  const std::string path = dp_config(tmp, "strong", tmp.file("strong"));
  std::string text = read_bytes(path);
  text.replace(text.find("batch_size: 32"), 14, "batch_size: 2");
  text.replace(text.find("fusion_bytes: 2048}"), 19, "fusion_bytes: 2048, scaling: strong}");
  write_bytes(path, text);
  const auto out = run_one_process_job(path, 3);
  EXPECT_EQ(out.master_code, kExitBadInput);
  EXPECT_NE(out.master_error.find("training.batch_size: 2 rows cannot be split over 3 workers"), std::string::npos)
      << out.master_error;
}

}  // namespace
}  // namespace cellgan
