// Faults injected into whole jobs in one process (master and workers on
// threads; docs/operations.md, "Fault injection"): a run with `nan` or
// `delay` finishes with a finite result and events.log says what happened;
// `delay` changes no bit of it, and `nan` gives the same bits for any W.
// A fault that does not fit the run is bad input. (drop-heartbeats:
// one_process_job_test.cpp; kill and stall, which act on the whole process:
// tests/mpi/faults_kill_and_stall.sh.)
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/checkpoint_store.h"
#include "common/error.h"
#include "common/fault_plan.h"
#include "grid/topology.h"
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

void expect_finite_result(const test::JobOutcome& out, const std::string& dir) {
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  for (const auto& [name, value] : out.result->scores) EXPECT_TRUE(std::isfinite(value)) << name;
  const auto result = nlohmann::json::parse(read_bytes(dir + "/result.json"));
  for (const auto& [name, value] : result["scores"].items()) EXPECT_TRUE(std::isfinite(value.get<double>())) << name;
}

bool has_line(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(FaultInjection, NanIsReplacedFromTheNeighbourhoodTheRunFinishesAndEventsLogSaysWhereAndWhen) {
  TempDir tmp;
  std::map<int, std::string> ensembles;
  for (int w : {2, 1}) {
    SCOPED_TRACE("W = " + std::to_string(w));
    const std::string dir = tmp.file("nan-w" + std::to_string(w));
    const auto out =
        run_one_process_job(toy_config(tmp, "nan-w" + std::to_string(w), dir, "[{kind: nan, cell: 1, gen: 2}]"), w);
    expect_finite_result(out, dir);
    EXPECT_EQ(out.worker_codes, std::vector<int>(static_cast<std::size_t>(w), kExitOk));
    const std::string events = read_bytes(dir + "/events.log");
    EXPECT_TRUE(has_line(events, "fault planned: nan in the generators of cell 1 at the start of generation 2"))
        << events;
    EXPECT_TRUE(has_line(events, "cell 1, generation 2: fault nan: the cell's generators poisoned")) << events;
    // By the first neighbour, in neighbourhood order (the cell itself is first).
    const int first = neighbourhood(GridShape(2, 2), 1, NeighbourhoodKind::kVonNeumann).at(1);
    EXPECT_TRUE(has_line(events, fmt::format("cell 1, generation 2: generator 0 non-finite: discarded, replaced by a "
                                             "copy of cell {}'s centre generator",
                                             first)))
        << events;
    EXPECT_TRUE(has_line(read_bytes(dir + "/config.yaml"), "faults:\n  - {kind: nan, cell: 1, gen: 2}"))
        << read_bytes(dir + "/config.yaml");
    ensembles[w] = read_bytes(dir + "/ensemble.bin");
  }
  EXPECT_TRUE(ensembles[1] == ensembles[2]) << "a run with faults is as reproducible as one without";
}

TEST(FaultInjection, DelaySlowsARankAndChangesNoBitOfTheResult) {
  TempDir tmp;
  const std::string plain = tmp.file("plain");
  const std::string slowed = tmp.file("slowed");
  ASSERT_TRUE(run_one_process_job(toy_config(tmp, "plain", plain), 2).result.has_value());
  const auto out = run_one_process_job(toy_config(tmp, "slowed", slowed, "[{kind: delay, rank: 1, gen: 2, ms: 4}]"), 2);
  expect_finite_result(out, slowed);
  EXPECT_TRUE(read_bytes(plain + "/ensemble.bin") == read_bytes(slowed + "/ensemble.bin"));
  EXPECT_EQ(metrics_without_seconds(plain), metrics_without_seconds(slowed));
  const std::string events = read_bytes(slowed + "/events.log");
  EXPECT_TRUE(has_line(events, "fault delay: worker rank 1 slowed by 4 ms per batch from generation 2")) << events;
  // Worker rank 1 trains cells 0 and 1 together (lockstep_training.h): 20
  // batches of at least 4 ms each, from generation 2, whose seconds its two
  // cells share.
  std::map<int, double> train_seconds;  // worker rank 1's, by generation
  std::istringstream in(read_bytes(slowed + "/metrics.jsonl"));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["cell"].get<int>() <= 1) train_seconds[j["generation"].get<int>()] += j["seconds"]["train"].get<double>();
  }
  ASSERT_EQ(train_seconds.size(), 4u);
  for (const auto& [generation, seconds] : train_seconds) {
    if (generation >= 2) {
      EXPECT_GE(seconds, 20 * 0.004) << "generation " << generation;
    }
  }
}

TEST(FaultInjection, ACorruptedCheckpointIsCaughtByItsChecksumAndTheRunFinishes) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  std::string config = toy_config(tmp, "corrupt", dir, "[{kind: corrupt-checkpoint, gen: 2, cell: 3}]");
  write_bytes(config, read_bytes(config) + "checkpoint: {every: 2, keep: 5}\n");
  const auto out = run_one_process_job(config, 2);
  expect_finite_result(out, dir);
  const std::string events = read_bytes(dir + "/events.log");
  EXPECT_TRUE(has_line(events, "fault corrupt-checkpoint: flipped a byte of")) << events;
  EXPECT_TRUE(has_line(events, "cell-0003.bin (cell 3, generation 2)")) << events;
  try {
    read_complete_checkpoint(checkpoint_folder(dir, 2));
    ADD_FAILURE() << "the corrupted checkpoint passed its check";
  } catch (const InputError& e) {
    EXPECT_TRUE(has_line(e.what(), "cell-0003.bin: checksum mismatch")) << e.what();
  }
  // Only the named cell's file, only at that generation.
  const CheckpointManifest manifest = read_manifest(checkpoint_folder(dir, 2));
  EXPECT_NO_THROW(read_cell_checkpoint(checkpoint_folder(dir, 2), manifest_entry(manifest, 2, "")));
  // It is the run's only checkpoint (4 generations), so none is complete.
  std::vector<std::string> skipped;
  EXPECT_FALSE(newest_complete_checkpoint(dir, skipped).has_value());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_TRUE(has_line(skipped[0], "gen-000002")) << skipped[0];
}

TEST(FaultInjection, FaultsFromTheCommandLineJoinTheConfigurationOnes) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const auto out = run_one_process_job(toy_config(tmp, "cli", dir, "[{kind: nan, cell: 3, gen: 1}]"), 2, {},
                                       {parse_fault_option("delay:rank=2,ms=1")});
  expect_finite_result(out, dir);
  const std::string config = read_bytes(dir + "/config.yaml");
  EXPECT_TRUE(has_line(config, "faults:\n  - {kind: nan, cell: 3, gen: 1}\n  - {kind: delay, rank: 2, gen: 1, ms: 1}"))
      << config;
  const std::string events = read_bytes(dir + "/events.log");
  EXPECT_TRUE(has_line(events, "fault planned: delay worker rank 2 by 1 ms per batch from generation 1")) << events;
  EXPECT_TRUE(has_line(events, "cell 3, generation 1: fault nan")) << events;
}

TEST(FaultInjection, AFaultThatDoesNotFitTheRunIsBadInputNamingWhereItCameFrom) {
  TempDir tmp;
  {
    const std::string dir = tmp.file("rank");
    const auto out = run_one_process_job(toy_config(tmp, "rank", dir, "[{kind: kill, rank: 3, gen: 1}]"), 2);
    EXPECT_FALSE(out.result.has_value());
    EXPECT_NE(out.master_error.find("rank.yaml: faults[0].rank: 3 is out of range: expected 1..2 (the worker ranks)"),
              std::string::npos)
        << out.master_error;
    EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitBadInput, kExitBadInput}));
    EXPECT_FALSE(std::filesystem::exists(dir));
  }
  {
    const std::string dir = tmp.file("cell");
    const auto out =
        run_one_process_job(toy_config(tmp, "cell", dir), 2, {}, {parse_fault_option("nan:cell=4,gen=1")});
    EXPECT_EQ(out.master_error, "--fault 'nan:cell=4,gen=1': cell: 4 is out of range: expected 0..3 (the cells of "
                                "the 2x2 grid)");
    EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitBadInput, kExitBadInput}));
    EXPECT_FALSE(std::filesystem::exists(dir));
  }
  {
    const std::string dir = tmp.file("gen");
    const auto out =
        run_one_process_job(toy_config(tmp, "gen", dir), 1, {}, {parse_fault_option("drop-heartbeats:rank=1,gen=5")});
    EXPECT_NE(out.master_error.find("--fault 'drop-heartbeats:rank=1,gen=5': gen: 5 is out of range: expected 1..4 "
                                    "(training.generations)"),
              std::string::npos)
        << out.master_error;
    EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitBadInput}));
  }
}

}  // namespace
}  // namespace cellgan
