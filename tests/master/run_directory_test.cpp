// Tests of master/run_directory.h: the output_dir checks, config.yaml, ordered metrics.jsonl and events.log.
#include "master/run_directory.h"

#include "common/run_records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::read_bytes;
using test::TempDir;
using test::write_bytes;

Config config_in(const std::string& output_dir) {
  Config c;
  c.source = "configs/test.yaml";
  c.output_dir = output_dir;
  return c;
}

// One metrics line, as a worker writes it.
// The metrics.jsonl line of a record (common/run_records.h), without its '\n'.
std::string line_of(const GenerationRecord& r) {
  std::string line = to_json_line(r);
  line.pop_back();
  return line;
}

GenerationRecord typed_record(std::int64_t generation, int cell) {
  GenerationRecord r;
  r.cell = cell;
  r.generation = generation;
  r.generator_loss = 0.5 + cell;
  r.discriminator_loss = 1.0 / (1 + generation);
  r.scores = {{"fid", 100.0 + cell}};
  r.seconds = {{"train", 0.25}};
  return r;
}

// The line one record of (generation, cell) gives.
std::string record(std::int64_t generation, int cell) { return line_of(typed_record(generation, cell)); }

// A worker's records for its cells, in the order given.
std::vector<GenerationRecord> records(std::int64_t generation, const std::vector<int>& cells) {
  std::vector<GenerationRecord> out;
  for (int cell : cells) out.push_back(typed_record(generation, cell));
  return out;
}

// The same with preview samples on some cells.
std::vector<GenerationRecord> records(std::int64_t generation, const std::vector<int>& cells,
                                      const std::map<int, std::vector<float>>& previews) {
  std::vector<GenerationRecord> out = records(generation, cells);
  for (auto& r : out)
    if (previews.count(r.cell)) r.preview = previews.at(r.cell);
  return out;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::istringstream in(read_bytes(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---------------------------------------------------------------- check_run_directory

TEST(CheckRunDirectory, PassesForANewDirectory) {
  TempDir tmp;
  EXPECT_NO_THROW(check_run_directory(config_in(tmp.file("new-run"))));
  EXPECT_NO_THROW(check_run_directory(config_in(tmp.file("a/b/c"))));
  EXPECT_FALSE(std::filesystem::exists(tmp.file("new-run"))) << "a check must not create anything";
}

TEST(CheckRunDirectory, PassesForAnUnfinishedRun) {
  TempDir tmp;
  std::filesystem::create_directories(tmp.file("run"));
  write_bytes(tmp.file("run/config.yaml"), to_yaml(config_in(tmp.file("run"))));
  write_bytes(tmp.file("run/metrics.jsonl"), record(1, 0) + "\n");
  EXPECT_NO_THROW(check_run_directory(config_in(tmp.file("run"))));
}

// Checkpoints, metrics.jsonl, events.log or run.json without config.yaml:
// a run whose configuration is gone, which a new run would overwrite.
TEST(CheckRunDirectory, RejectsTheRecordsOfARunWithoutItsConfig) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  std::filesystem::create_directories(dir + "/checkpoints/gen-000002");
  write_bytes(dir + "/run.json", "{}\n");
  const std::string message = input_error_of([&] { check_run_directory(config_in(dir)); });
  EXPECT_EQ(message, "configs/test.yaml: output_dir: '" + dir + "' holds records of a run (checkpoints, run.json) "
                     "but not its config.yaml: it is no new run, and cannot be resumed without it: put config.yaml "
                     "back, or choose another output_dir");
  // Files of its own, or a lock left by a job that wrote nothing, are no run's.
  const std::string other = tmp.file("other");
  std::filesystem::create_directories(other);
  write_bytes(other + "/notes.txt", "mine\n");
  write_bytes(other + "/run.lock", "1@host\n");
  EXPECT_NO_THROW(check_run_directory(config_in(other)));
}

TEST(CheckRunDirectory, RejectsAFinishedRun) {
  TempDir tmp;
  const std::string dir = tmp.file("done");
  std::filesystem::create_directories(dir);
  write_bytes(dir + "/result.json", "{}\n");
  const std::string message = input_error_of([&] { check_run_directory(config_in(dir)); });
  EXPECT_NE(message.find("output_dir"), std::string::npos) << message;
  EXPECT_NE(message.find("configs/test.yaml"), std::string::npos) << message;
  EXPECT_NE(message.find(dir), std::string::npos) << message;
}

TEST(CheckRunDirectory, RejectsARegularFile) {
  TempDir tmp;
  const std::string file = tmp.file("not-a-dir");
  write_bytes(file, "hello\n");
  const std::string message = input_error_of([&] { check_run_directory(config_in(file)); });
  EXPECT_NE(message.find("output_dir"), std::string::npos) << message;
  EXPECT_NE(message.find(file), std::string::npos) << message;
}

// The master checks this while validating, before the workers start, so
// that every rank exits 2 quietly instead of the master failing later.
TEST(CheckRunDirectory, RejectsAFolderUnderARegularFileAndCreatesNothing) {
  TempDir tmp;
  const std::string file = tmp.file("a-file");
  write_bytes(file, "hello\n");
  const std::string message = input_error_of([&] { check_run_directory(config_in(file + "/runs/one")); });
  EXPECT_EQ(message, "configs/test.yaml: output_dir: '" + file + "/runs/one' cannot be created: '" + file +
                         "' is a file, not a folder: expected a folder that can be created or written");
  EXPECT_EQ(read_bytes(file), "hello\n");
}

// ---------------------------------------------------------------- RunDirectory

TEST(RunDirectory, WritesTheResolvedConfig) {
  TempDir tmp;
  Config c = config_in(tmp.file("runs/one"));
  c.seed = 99;
  c.grid.rows = 3;
  c.grid.cols = 4;
  c.training.generations = 17;
  c.training.learning_rate = 7.5e-4;
  c.training.loss = LossKind::kMustangs;
  c.runtime.log_level = "debug";
  RunDirectory run(c, 12);
  EXPECT_EQ(run.path("config.yaml"), (std::filesystem::path(c.output_dir) / "config.yaml").string());
  ASSERT_TRUE(std::filesystem::is_regular_file(run.path("config.yaml")));

  const Config back = parse_config(read_bytes(run.path("config.yaml")), run.path("config.yaml"));
  EXPECT_EQ(back.seed, 99u);
  EXPECT_EQ(back.output_dir, c.output_dir);
  EXPECT_EQ(back.grid.rows, 3);
  EXPECT_EQ(back.grid.cols, 4);
  EXPECT_EQ(back.training.generations, 17);
  EXPECT_DOUBLE_EQ(back.training.learning_rate, 7.5e-4);
  EXPECT_EQ(back.training.loss, LossKind::kMustangs);
  EXPECT_EQ(back.runtime.log_level, "debug");
  EXPECT_EQ(back.data.dataset, c.data.dataset);
  EXPECT_EQ(back.training.batch_size, c.training.batch_size);

  EXPECT_TRUE(std::filesystem::exists(run.path("metrics.jsonl")));
  EXPECT_TRUE(std::filesystem::exists(run.path("events.log")));
  EXPECT_TRUE(lines_of(run.path("metrics.jsonl")).empty());
  EXPECT_EQ(run.generations_written(), 0);
}

TEST(RunDirectory, WritesAGenerationOnlyWhenComplete) {
  TempDir tmp;
  RunDirectory run(config_in(tmp.file("run")), 4);
  // Worker A has cells 0 and 1, worker B cells 2 and 3.
  EXPECT_TRUE(run.add_records(1, records(1, {0, 1})).empty());
  EXPECT_TRUE(lines_of(run.path("metrics.jsonl")).empty());
  EXPECT_EQ(run.generations_written(), 0);

  EXPECT_EQ(run.add_records(1, records(1, {2, 3})), std::vector<std::int64_t>{1});
  EXPECT_EQ(run.generations_written(), 1);
  EXPECT_EQ(lines_of(run.path("metrics.jsonl")),
            (std::vector<std::string>{record(1, 0), record(1, 1), record(1, 2), record(1, 3)}));

  const auto& g1 = run.generation_records(1);
  ASSERT_EQ(g1.size(), 4u);
  for (int cell = 0; cell < 4; ++cell) EXPECT_EQ(line_of(g1.at(cell)), record(1, cell));
}

TEST(RunDirectory, HandsOverPreviewsOnceTheirGenerationIsComplete) {
  TempDir tmp;
  RunDirectory run(config_in(tmp.file("run")), 2);
  run.add_records(1, records(1, {0}, {{0, {0.5f, -0.5f}}}));
  EXPECT_TRUE(run.take_previews(1).empty()) << "generation 1 is not complete yet";
  EXPECT_EQ(run.add_records(1, records(1, {1}, {{1, {1.0f, 0.0f}}})), std::vector<std::int64_t>{1});
  const auto previews = run.take_previews(1);
  ASSERT_EQ(previews.size(), 2u);
  EXPECT_EQ(previews.at(0), (std::vector<float>{0.5f, -0.5f}));
  EXPECT_EQ(previews.at(1), (std::vector<float>{1.0f, 0.0f}));
  EXPECT_TRUE(run.take_previews(1).empty()) << "handed over once";
  EXPECT_EQ(run.add_records(2, records(2, {0, 1})), std::vector<std::int64_t>{2});
  EXPECT_TRUE(run.take_previews(2).empty()) << "a generation without previews";
  // Previews of a generation not taken are dropped by the next call.
  run.add_records(3, records(3, {0, 1}, {{0, {0.25f}}}));
  run.add_records(4, records(4, {0}));
  EXPECT_TRUE(run.take_previews(3).empty());
}

TEST(RunDirectory, OrdersRecordsThatArriveOutOfOrder) {
  TempDir tmp;
  RunDirectory run(config_in(tmp.file("run")), 4);
  // Generation 2 of worker B before generation 1 of worker A; cells within a
  // message in no particular order.
  EXPECT_TRUE(run.add_records(1, records(1, {3, 2})).empty());
  EXPECT_TRUE(run.add_records(2, records(2, {3, 2})).empty());
  EXPECT_TRUE(lines_of(run.path("metrics.jsonl")).empty());
  EXPECT_EQ(run.add_records(1, records(1, {1, 0})), std::vector<std::int64_t>{1});
  EXPECT_EQ(run.add_records(2, records(2, {1, 0})), std::vector<std::int64_t>{2});

  std::vector<std::string> expected;
  for (int g = 1; g <= 2; ++g)
    for (int cell = 0; cell < 4; ++cell) expected.push_back(record(g, cell));
  EXPECT_EQ(lines_of(run.path("metrics.jsonl")), expected);
  EXPECT_EQ(run.generations_written(), 2);
}

TEST(RunDirectory, ALateGenerationReleasesTheOnesWaitingBehindIt) {
  TempDir tmp;
  RunDirectory run(config_in(tmp.file("run")), 2);
  // Worker B (cell 1) runs three generations ahead of worker A (cell 0).
  for (int g = 1; g <= 3; ++g) EXPECT_TRUE(run.add_records(g, records(g, {1})).empty());
  EXPECT_TRUE(run.add_records(3, records(3, {0})).empty());
  EXPECT_TRUE(run.add_records(2, records(2, {0})).empty());
  EXPECT_TRUE(lines_of(run.path("metrics.jsonl")).empty());
  EXPECT_EQ(run.add_records(1, records(1, {0})), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(run.generations_written(), 3);

  std::vector<std::string> expected;
  for (int g = 1; g <= 3; ++g)
    for (int cell = 0; cell < 2; ++cell) expected.push_back(record(g, cell));
  EXPECT_EQ(lines_of(run.path("metrics.jsonl")), expected);

  // Each generation's own lines, also when several were written at once.
  for (int g = 1; g <= 3; ++g) {
    SCOPED_TRACE("generation " + std::to_string(g));
    const auto& typed = run.generation_records(g);
    ASSERT_EQ(typed.size(), 2u);
    EXPECT_EQ(line_of(typed.at(0)), record(g, 0));
    EXPECT_EQ(line_of(typed.at(1)), record(g, 1));
  }
  // Only the last call's generations are kept.
  run.add_records(4, records(4, {0}));
  EXPECT_THROW(run.generation_records(3), std::out_of_range);
}

TEST(RunDirectory, EventsAreTimestampedLines) {
  TempDir tmp;
  RunDirectory run(config_in(tmp.file("run")), 1);
  run.event("start: 2 workers");
  run.event("worker rank 2 late: silent for 10.0 s");
  const auto lines = lines_of(run.path("events.log"));
  ASSERT_EQ(lines.size(), 2u);
  const std::regex stamped(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2} (.*)$)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[0], m, stamped)) << lines[0];
  EXPECT_EQ(m[1].str(), "start: 2 workers");
  ASSERT_TRUE(std::regex_match(lines[1], m, stamped)) << lines[1];
  EXPECT_EQ(m[1].str(), "worker rank 2 late: silent for 10.0 s");
  run.event("gathered 1 ensembles");
  EXPECT_EQ(lines_of(run.path("events.log")).size(), 3u);
}

TEST(RunDirectory, TheRecordsEventsGoToEventsLogInCellOrderOnceTheGenerationIsComplete) {
  TempDir tmp;
  RunDirectory run(config_in(tmp.file("run")), 3);
  auto late = records(1, {2});
  late[0].events = {"cell 2, generation 1: fault nan", "cell 2, generation 1: generator 0 non-finite"};
  run.add_records(1, std::move(late));
  EXPECT_TRUE(lines_of(run.path("events.log")).empty()) << "the generation is not complete yet";
  auto early = records(1, {0, 1});
  early[0].events = {"fault stall: worker rank 1"};
  run.add_records(1, std::move(early));
  std::vector<std::string> texts;
  for (const std::string& line : lines_of(run.path("events.log"))) texts.push_back(line.substr(line.find(' ') + 1));
  EXPECT_EQ(texts, (std::vector<std::string>{"fault stall: worker rank 1", "cell 2, generation 1: fault nan",
                                             "cell 2, generation 1: generator 0 non-finite"}));
  EXPECT_EQ(lines_of(run.path("metrics.jsonl")), (std::vector<std::string>{record(1, 0), record(1, 1), record(1, 2)}))
      << "events are not metrics";
}

TEST(RunDirectory, StartsFreshFilesInAnUnfinishedRun) {
  TempDir tmp;
  const std::string dir = tmp.file("run");
  std::filesystem::create_directories(dir);
  write_bytes(dir + "/metrics.jsonl", "stale line\n");
  write_bytes(dir + "/events.log", "stale event\n");
  RunDirectory run(config_in(dir), 1);
  EXPECT_TRUE(lines_of(run.path("metrics.jsonl")).empty());
  EXPECT_TRUE(lines_of(run.path("events.log")).empty());
  EXPECT_EQ(run.add_records(1, records(1, {0})), std::vector<std::int64_t>{1});
  EXPECT_EQ(lines_of(run.path("metrics.jsonl")), std::vector<std::string>{record(1, 0)});
}

}  // namespace
}  // namespace cellgan
