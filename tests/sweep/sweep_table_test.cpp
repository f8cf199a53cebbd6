// Reading run folders back and the sweep's table: the timing rule, the
// speed-up against W = 1 of the same grid and seed, and sweep.csv.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <fmt/core.h>

#include "common/config.h"
#include "common/run_state.h"
#include "sweep/run_record.h"
#include "sweep/sweep_outputs.h"
#include "sweep/sweep_table.h"

namespace cellgan::sweep {
namespace {

namespace fs = std::filesystem;

class RunFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sweep_table_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A run folder as cellgan writes it: `cells` records per generation, each
  // with the given train and idle seconds, W workers (run.json); the wall
  // time is result.json's 12.5 s (run.json's seconds 0, as before it held them).
  std::string make_run(const std::string& name, int rows, int cols, int workers, std::uint64_t seed, int generations,
                       double train, double idle, bool finished = true) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    Config c;
    c.grid.rows = rows;
    c.grid.cols = cols;
    c.seed = seed;
    c.training.generations = generations;
    c.data.dataset = DatasetKind::kRing;
    c.network.kind = NetworkKind::kToy;
    std::ofstream(dir / "config.yaml") << to_yaml(c);
    std::ofstream(dir / "events.log") << "2026-11-24T10:00:00 start: " << workers << " workers, grid " << rows << "x"
                                      << cols << ", worker grid 1x1 of blocks\n";
    RunState state;
    state.layout = "coevolution";
    state.rows = rows;
    state.cols = cols;
    state.workers = workers;
    state.seed = seed;
    state.generations = state.generation = generations;
    state.status = finished ? "finished" : "running";
    if (finished) state.exit_code = 0;
    EXPECT_EQ(write_run_state(dir.string(), state), "");
    std::ofstream metrics(dir / "metrics.jsonl");
    for (int g = 1; g <= generations; ++g)
      for (int cell = 0; cell < rows * cols; ++cell)
        metrics << "{\"generation\":" << g << ",\"cell\":" << cell << ",\"seconds\":{\"train\":"
                << (g == 1 ? 100.0 : train) << ",\"gather\":0.0,\"idle\":" << idle << "}}\n";
    if (finished)
      std::ofstream(dir / "result.json") << "{\"seconds\": 12.5, \"scores\": {\"modes_covered\": 7, \"tvd\": 0.25}}";
    return dir.string();
  }

  fs::path root_;
};

TEST_F(RunFolders, TimesLeaveOutTheWarmUpGenerationAndDivideByW) {
  const auto r = read_run_record(make_run("a", 2, 2, 2, 1, 3, 0.5, 0.25));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->workers, 2);
  EXPECT_EQ(r->generations_timed, 2);
  // 4 cells x (0.5 + 0.25) s per generation, over 2 workers.
  EXPECT_DOUBLE_EQ(r->seconds_per_generation, 1.5);
  EXPECT_DOUBLE_EQ(r->compute_per_generation, 1.0);
  EXPECT_DOUBLE_EQ(r->comm_per_generation, 0.5);
  EXPECT_TRUE(r->finished);
  EXPECT_DOUBLE_EQ(r->total_seconds, 12.5);
  EXPECT_DOUBLE_EQ(r->scores.at("modes_covered"), 7.0);
}

TEST_F(RunFolders, AFolderWithoutConfigIsNoRun) {
  fs::create_directories(root_ / "empty");
  EXPECT_FALSE(read_run_record((root_ / "empty").string()));
}

TEST_F(RunFolders, FindsRunFoldersButNotCheckpoints) {
  make_run("x/a", 1, 1, 1, 1, 2, 1, 0);
  make_run("b", 1, 1, 1, 2, 2, 1, 0);
  fs::create_directories(root_ / "b" / "checkpoints" / "gen-1");
  std::ofstream(root_ / "b" / "checkpoints" / "gen-1" / "config.yaml") << "seed: 1\n";
  const auto found = find_run_folders(root_.string());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(fs::path(found[0]).filename(), "b");
  EXPECT_EQ(fs::path(found[1]).filename(), "a");
}

TEST_F(RunFolders, SpeedUpIsAgainstWOneOfTheSameGridAndSeed) {
  std::vector<RunRecord> runs;
  runs.push_back(*read_run_record(make_run("w1", 2, 2, 1, 1, 3, 1.0, 0.0)));    // 4 s per generation
  runs.push_back(*read_run_record(make_run("w2", 2, 2, 2, 1, 3, 1.0, 0.6)));    // 3.2 s
  runs.push_back(*read_run_record(make_run("w2s2", 2, 2, 2, 2, 3, 1.0, 0.0)));  // no W = 1 of seed 2
  runs.push_back(*read_run_record(make_run("open", 2, 2, 4, 1, 3, 1.0, 0.0, false)));
  const auto rows = sweep_rows(runs);
  ASSERT_EQ(rows.size(), 3u);  // the unfinished run is left out
  EXPECT_EQ(rows[0].run.workers, 1);
  ASSERT_TRUE(rows[0].speedup);
  EXPECT_DOUBLE_EQ(*rows[0].speedup, 1.0);
  EXPECT_DOUBLE_EQ(*rows[0].efficiency, 1.0);
  ASSERT_TRUE(rows[1].speedup);
  EXPECT_DOUBLE_EQ(*rows[1].speedup, 4.0 / 3.2);
  EXPECT_DOUBLE_EQ(*rows[1].efficiency, 4.0 / 3.2 / 2);
  EXPECT_NEAR(rows[1].comm_share, 0.6 / 1.6, 1e-12);
  EXPECT_FALSE(rows[2].speedup);

  const std::string csv = csv_text(rows);
  std::istringstream lines(csv);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header,
            "grid,rows,cols,cells,workers,seed,generations,s_per_generation,total_s,speedup,efficiency,compute_s,"
            "comm_s,comm_share,layout,overlaps,modes_covered,tvd");
  EXPECT_EQ(first, "2x2,2,2,4,1,1,3,4.0000,12.50,1.000,1.000,4.0000,0.0000,0.0000,coevolution,0,7.0000,0.2500");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_EQ(main_score(rows), "modes_covered");
}

// A key the sweep varied keeps its column when the runs that finished
// agree in it (the other value failed, or is still to run).
TEST_F(RunFolders, AVariedKeyKeepsItsColumnWhenOneValueFinished) {
  std::vector<RunRecord> runs{*read_run_record(make_run("one", 2, 2, 1, 1, 3, 1.0, 0.0))};
  EXPECT_TRUE(keep_varied_keys(runs).empty());
  EXPECT_EQ(keep_varied_keys(runs, {"training.batch_size"}), std::vector<std::string>{"training.batch_size"});
  EXPECT_EQ(runs[0].values.at("training.batch_size"), "100");
  const std::string csv = csv_text(sweep_rows(runs));
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",layout,training.batch_size,overlaps,"), std::string::npos) << header;
}

// The keys a sweep varied are recorded beside its runs, so that --collect
// of its runs/ folder, or of the sweep's folder above it, keeps their
// columns too; a second sweep into the folder adds its own.
TEST_F(RunFolders, VariedKeysRecordedBesideTheRunsKeepTheirColumnsWhenCollected) {
  make_run("runs/one", 2, 2, 1, 1, 3, 1.0, 0.0);
  const std::string runs = (root_ / "runs").string();
  record_varied_keys(runs, {"training.batch_size"});
  record_varied_keys(runs, {"training.batch_size", "training.learning_rate"});
  std::ifstream in(root_ / "runs" / kVariedKeysFile);
  const std::string recorded((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(recorded, "training.batch_size\ntraining.learning_rate\n");
  for (const fs::path& collected : {root_ / "runs", root_}) {
    const fs::path out = root_ / "out";
    const OutputsReport report = write_sweep_outputs(collected.string(), out.string(), SweepNotes{});
    EXPECT_EQ(report.rows, 1) << collected;
    std::ifstream csv(out / "sweep.csv");
    std::string header;
    std::getline(csv, header);
    EXPECT_NE(header.find(",layout,training.batch_size,training.learning_rate,overlaps,"), std::string::npos)
        << collected << ": " << header;
    fs::remove_all(out);
  }
}

// A score written as null (not finite, as a toy's reverse_kl often is) keeps
// its column in sweep.csv, as nan, and stays out of the tables' choice.
TEST_F(RunFolders, AScoreNotFiniteKeepsItsColumnAsNan) {
  const std::string dir = make_run("inf", 2, 2, 1, 1, 3, 1.0, 0.0);
  std::ofstream(dir + "/result.json")
      << "{\"seconds\": 12.5, \"scores\": {\"modes_covered\": 7, \"reverse_kl\": null, \"tvd\": 0.25}}";
  const auto rows = sweep_rows({*read_run_record(dir), *read_run_record(make_run("finite", 2, 2, 1, 2, 3, 1.0, 0.0))});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].run.scores.count("reverse_kl"), 0u);
  EXPECT_EQ(rows[0].run.unfinite_scores, std::set<std::string>{"reverse_kl"});
  std::istringstream lines(csv_text(rows));
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.substr(header.rfind(",overlaps")), ",overlaps,modes_covered,reverse_kl,tvd");
  EXPECT_EQ(first.substr(first.size() - std::string(",7.0000,nan,0.2500").size()), ",7.0000,nan,0.2500");
  EXPECT_EQ(second.substr(second.size() - std::string(",7.0000,,0.2500").size()), ",7.0000,,0.2500");
  EXPECT_EQ(score_names(rows), (std::vector<std::string>{"modes_covered", "tvd"}));
}

TEST_F(RunFolders, RunJsonGivesWLayoutTheSummedTimeAndSpans) {
  const std::string dir = make_run("resumed", 1, 1, 3, 1, 3, 1.0, 0.0);
  std::ofstream(dir + "/run.json")
      << R"({"layout":"data_parallel","grid":[1,1],"workers":4,"device":"cpu","seed":1,"generations":3,)"
      << R"("generation":3,"status":"finished","exit_code":0,"message":"","stretches":2,"objective":"fid",)"
      << R"("seconds":30.25,"spans":[[100.0,110.0],[200.0,220.25]]})";
  const auto r = read_run_record(dir);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->workers, 4) << "run.json's W, not events.log's line";
  EXPECT_EQ(r->layout, "data_parallel");
  EXPECT_DOUBLE_EQ(r->total_seconds, 30.25) << "every stretch, not result.json's last one";
  ASSERT_EQ(r->spans.size(), 2u);
  EXPECT_DOUBLE_EQ(r->spans[1].second, 220.25);
}

TEST_F(RunFolders, VariedKeysAreTheConfigurationKeysThatDifferAndSpeedUpComparesLikeWithLike) {
  std::vector<RunRecord> runs;
  for (int batch : {32, 64})
    for (int w : {1, 2}) {
      const std::string dir = make_run(fmt::format("b{}-w{}", batch, w), 2, 2, w, 1, 3, batch / 32.0, 0.0);
      std::string text;
      { std::ifstream in(dir + "/config.yaml"); std::stringstream ss; ss << in.rdbuf(); text = ss.str(); }
      const auto at = text.find("batch_size:");
      ASSERT_NE(at, std::string::npos);
      text.replace(at, text.find('\n', at) - at, fmt::format("batch_size: {}", batch));
      std::ofstream(dir + "/config.yaml") << text;
      runs.push_back(*read_run_record(dir));
    }
  runs[0].settings["runtime.threads"] = "2";  // how a run is run, not what it trains: never a varied key
  runs[1].settings["layout"] = "per_class";  // a column of its own
  EXPECT_EQ(keep_varied_keys(runs), std::vector<std::string>{"training.batch_size"});
  EXPECT_EQ(runs[2].values.at("training.batch_size"), "64");
  const auto rows = sweep_rows(runs);
  ASSERT_EQ(rows.size(), 4u);
  for (const SweepRow& row : rows) {
    ASSERT_TRUE(row.speedup) << row.run.folder;
    // W = 2 takes half the time of W = 1 of the same batch size (the
    // phase seconds are divided by W); batch 64's W = 1 is twice batch 32's.
    EXPECT_DOUBLE_EQ(*row.speedup, row.run.workers == 1 ? 1.0 : 2.0) << row.run.folder;
  }
  const std::string csv = csv_text(rows);
  EXPECT_NE(csv.find("comm_share,layout,training.batch_size,overlaps,"), std::string::npos) << csv;
  RunRecord small = runs[0], large = runs[0];
  small.values["training.batch_size"] = "8";
  large.values["training.batch_size"] = "100";
  large.folder = "z", small.folder = "zz";
  const auto ordered = sweep_rows({large, small});
  EXPECT_EQ(ordered[0].run.values.at("training.batch_size"), "8") << "numbers in order of value, not of text";
}

TEST(SweepRows, RunsThatRanAtTheSameTimeAreFlagged) {
  RunRecord a, b, c;
  for (RunRecord* r : {&a, &b, &c}) {
    r->rows = r->cols = 1;
    r->workers = 1;
    r->finished = true;
    r->seconds_per_generation = 1.0;
    r->layout = "coevolution";
  }
  a.folder = "runs/a", b.folder = "runs/b", c.folder = "runs/c";
  a.spans = {{0, 10}};
  b.spans = {{5, 20}};
  c.spans = {{20, 30}};  // starts as b ends: no overlap
  const auto rows = sweep_rows({a, b, c});
  std::map<std::string, std::vector<std::string>> overlapped;
  for (const SweepRow& r : rows) overlapped[r.run.folder] = r.overlapped;
  EXPECT_EQ(overlapped["runs/a"], std::vector<std::string>{"b"});
  EXPECT_EQ(overlapped["runs/b"], std::vector<std::string>{"a"});
  EXPECT_TRUE(overlapped["runs/c"].empty());
  const std::string md = markdown_text(rows, SweepNotes{});
  EXPECT_NE(md.find("- a ran at the same time as b"), std::string::npos) << md;
  EXPECT_NE(md.find("1.000 (overlapped)"), std::string::npos) << md;
}

}  // namespace
}  // namespace cellgan::sweep

namespace cellgan::sweep {
namespace {

TEST(SweepSummary, ListsFailedSkippedAndUnfinishedRunsAndEmbedsThePlots) {
  RunRecord r;
  r.rows = r.cols = 2;
  r.workers = 1;
  r.seed = 4;
  r.finished = true;
  r.seconds_per_generation = 0.5;
  r.dataset = "mnist";
  r.layout = "coevolution";
  r.scores = {{"fid", 31.5}, {"tvd", 0.2}};
  const auto rows = sweep_rows({r});
  SweepNotes notes;
  notes.title = "a test";
  notes.failed = {"g3x3-w2-s4: exit 1 (see logs/g3x3-w2-s4.log)"};
  notes.skipped = {"g1x1-w2-s4: 2 workers for 1 cell"};
  notes.unfinished = {"g3x3-w1-s4"};
  notes.plots = {{"time.png", "Time per generation"}};
  const std::string md = markdown_text(rows, notes);
  EXPECT_NE(md.find("1 finished run, 1 unfinished, 1 failed, 1 skipped"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2x2 | coevolution | 1 | 4 | 0.500 | 0.0 | 1.00 | 1.00 | 0.0 % | 31.5000 |"), std::string::npos)
      << md;
  EXPECT_EQ(counts_text(rows, notes), "1 finished run, 1 unfinished, 1 failed, 1 skipped") << "as the terminal says";
  EXPECT_NE(md.find("- g3x3-w2-s4: exit 1"), std::string::npos) << md;
  EXPECT_NE(md.find("- g3x3-w1-s4"), std::string::npos) << md;
  EXPECT_NE(md.find("![Time per generation](time.png)"), std::string::npos) << md;
  EXPECT_EQ(main_score(rows), "fid");
}

}  // namespace
}  // namespace cellgan::sweep
