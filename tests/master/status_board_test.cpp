// The live status: the board's snapshot (states, ages, ETA, events kept),
// its JSON and Prometheus renderings, and the progress bar's line.
#include "master/status_board.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "master/progress_line.h"
#include "master/status_render.h"

namespace cellgan {
namespace {

using std::chrono::milliseconds;
using Clock = StatusBoard::Clock;

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1);

// A 2x2 board of 10 generations; cells 0, 1 on worker 1 and 2, 3 on worker 2.
StatusBoard two_by_two() { return StatusBoard(2, 2, "coevolution", "fid", 10, 2, {1, 1, 2, 2}, t0); }

TEST(StatusBoard, StartsWithEveryCellWaitingOnItsOwnerAndEveryWorkerStarting) {
  const StatusSnapshot s = two_by_two().snapshot(t0 + milliseconds(1500));
  EXPECT_EQ(s.phase, "starting");
  EXPECT_EQ(s.rows, 2);
  EXPECT_EQ(s.cols, 2);
  ASSERT_EQ(s.cells.size(), 4u);
  EXPECT_EQ(s.cells[3].row, 1);
  EXPECT_EQ(s.cells[3].col, 1);
  EXPECT_EQ(s.cells[2].worker, 2);
  for (const CellStatus& c : s.cells) {
    EXPECT_EQ(c.state, "waiting");
    EXPECT_FALSE(c.score.has_value());
  }
  ASSERT_EQ(s.workers.size(), 2u);
  EXPECT_EQ(s.workers[1].rank, 2);
  EXPECT_EQ(s.workers[1].state, "starting");
  EXPECT_DOUBLE_EQ(s.workers[1].heartbeat_age_seconds, 1.5);  // never heard: since the start
  EXPECT_DOUBLE_EQ(s.elapsed_seconds, 1.5);
  EXPECT_FALSE(s.eta_seconds.has_value());
}

TEST(StatusBoard, CellsFollowTheirGenerationsScoresAndTheirOwnersDeath) {
  StatusBoard board = two_by_two();
  board.cell_generation(0, 1, 3, 12.5);
  board.cell_generation(1, 1, 10, 7.0);
  board.cell_generation(2, 2, 3, NAN);
  board.set_worker_state(2, "dead");
  const StatusSnapshot s = board.snapshot(t0);
  EXPECT_EQ(s.cells[0].state, "training");
  EXPECT_EQ(s.cells[0].generation, 3);
  EXPECT_EQ(*s.cells[0].score, 12.5);
  EXPECT_EQ(s.cells[1].state, "done");
  EXPECT_FALSE(s.cells[2].score.has_value()) << "a NaN score is no score";
  EXPECT_EQ(s.cells[2].state, "dead");
  EXPECT_EQ(s.cells[3].state, "dead");
  board.set_cell_worker(3, 1);  // re-homed
  EXPECT_EQ(board.snapshot(t0).cells[3].worker, 1);
  EXPECT_EQ(board.snapshot(t0).cells[3].state, "waiting");
}

TEST(StatusBoard, HeartbeatAgeIsTheTimeSinceTheWorkerWasLastHeard) {
  StatusBoard board = two_by_two();
  board.worker_heard(1, "processing", 4, t0 + milliseconds(2000));
  const StatusSnapshot s = board.snapshot(t0 + milliseconds(2250));
  EXPECT_EQ(s.workers[0].state, "processing");
  EXPECT_EQ(s.workers[0].generation, 4);
  EXPECT_DOUBLE_EQ(s.workers[0].heartbeat_age_seconds, 0.25);
  board.set_worker_state(1, "late");
  EXPECT_EQ(board.snapshot(t0).workers[0].state, "late");
}

TEST(StatusBoard, EtaIsThePaceSoFarTimesTheGenerationsLeftLessTheTimeSinceTheLast) {
  StatusBoard board = two_by_two();
  board.generation_written(2, t0 + std::chrono::seconds(10), 1, 3.5);  // 5 s a generation
  const StatusSnapshot s = board.snapshot(t0 + std::chrono::seconds(12));
  EXPECT_EQ(s.generations_done, 2);
  ASSERT_TRUE(s.eta_seconds.has_value());
  EXPECT_DOUBLE_EQ(*s.eta_seconds, 8 * 5.0 - 2.0);
  EXPECT_EQ(*s.best_cell, 1);
  EXPECT_EQ(*s.best_score, 3.5);
  EXPECT_DOUBLE_EQ(*board.snapshot(t0 + std::chrono::seconds(100)).eta_seconds, 0.0) << "never negative";
}

TEST(StatusBoard, KeepsTheLatestHundredEventsAndCountsThemAll) {
  StatusBoard board = two_by_two();
  for (int i = 0; i < 150; ++i) board.event("event " + std::to_string(i), t0 + milliseconds(i));
  const StatusSnapshot s = board.snapshot(t0);
  EXPECT_EQ(s.events_total, 150);
  ASSERT_EQ(s.events.size(), StatusBoard::kEventsKept);
  EXPECT_EQ(s.events.front().line, "event 50");
  EXPECT_DOUBLE_EQ(s.events.front().seconds, 0.05);
  EXPECT_EQ(s.events.back().line, "event 149");
}

TEST(StatusBoard, RejectsCellsAndWorkersOutsideTheJob) {
  StatusBoard board = two_by_two();
  EXPECT_THROW(board.cell_generation(4, 1, 1, 1.0), std::invalid_argument);
  EXPECT_THROW(board.cell_generation(0, 3, 1, 1.0), std::invalid_argument);
  EXPECT_THROW(board.worker_heard(0, "processing", 1, t0), std::invalid_argument);
  EXPECT_THROW(StatusBoard(2, 2, "coevolution", "fid", 10, 2, {1, 1, 2}, t0), std::invalid_argument);
}

TEST(StatusBoard, ReadersOnOtherThreadsSeeWholeUpdates) {
  StatusBoard board = two_by_two();
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) {
      const StatusSnapshot s = board.snapshot(Clock::now());
      // A generation and its score are written together: score == generation.
      for (const CellStatus& c : s.cells)
        if (c.score) {
          ASSERT_EQ(*c.score, static_cast<double>(c.generation));
        }
      ASSERT_LE(s.events.size(), StatusBoard::kEventsKept);
    }
  });
  for (int g = 1; g <= 2000; ++g) {
    board.cell_generation(g % 4, g % 4 < 2 ? 1 : 2, g, static_cast<double>(g));
    board.event("x", Clock::now());
  }
  stop = true;
  reader.join();
}

// A board in a known state, as the renderings see it.
StatusSnapshot known_state() {
  StatusBoard board = two_by_two();
  board.set_phase("training");
  board.cell_generation(0, 1, 3, 12.5);
  board.cell_generation(1, 1, 3, 20.25);
  board.worker_heard(1, "processing", 3, t0 + std::chrono::seconds(4));
  board.set_worker_state(2, "late \"slow\"");
  board.generation_written(3, t0 + std::chrono::seconds(3), 0, 12.5);
  board.event("worker rank 2 late: silent for 10.0 s", t0 + std::chrono::seconds(5));
  return board.snapshot(t0 + std::chrono::seconds(6));
}

TEST(StatusRender, JsonHoldsTheGridCellsWorkersEventsAndNullForWhatIsUnknown) {
  const auto j = nlohmann::json::parse(status_json(known_state()));
  EXPECT_EQ(j["phase"], "training");
  EXPECT_EQ(j["grid"]["rows"], 2);
  EXPECT_EQ(j["objective"], "fid");
  EXPECT_EQ(j["generations"]["total"], 10);
  EXPECT_EQ(j["generations"]["done"], 3);
  EXPECT_DOUBLE_EQ(j["eta_seconds"].get<double>(), 7 * 1.0 - 3.0);
  EXPECT_EQ(j["best"]["cell"], 0);
  ASSERT_EQ(j["cells"].size(), 4u);
  EXPECT_EQ(j["cells"][1]["score"], 20.25);
  EXPECT_EQ(j["cells"][1]["worker"], 1);
  EXPECT_EQ(j["cells"][1]["state"], "training");
  EXPECT_TRUE(j["cells"][2]["score"].is_null());
  ASSERT_EQ(j["workers"].size(), 2u);
  EXPECT_EQ(j["workers"][0]["heartbeat_age_seconds"], 2.0);
  EXPECT_EQ(j["workers"][1]["state"], "late \"slow\"");
  ASSERT_EQ(j["events"].size(), 1u);
  EXPECT_EQ(j["events"][0]["line"], "worker rank 2 late: silent for 10.0 s");
  EXPECT_EQ(j["events_total"], 1);
  EXPECT_TRUE(j["preview"].is_null());
}

TEST(StatusRender, JsonNamesTheUnitsAsTheLayoutDescriptionDoes) {
  const auto units = [](const std::string& layout) {
    const StatusBoard board(2, 2, layout, "fid", 10, 2, {1, 1, 2, 2}, t0);
    const auto j = nlohmann::json::parse(status_json(board.snapshot(t0)));
    return j["unit"].get<std::string>() + "/" + j["curve_unit"].get<std::string>();
  };
  EXPECT_EQ(units("coevolution"), "cell/cell");
  EXPECT_EQ(units("per_class"), "class/class");
  EXPECT_EQ(units("data_parallel"), "cell/replicas");
  EXPECT_EQ(units("a layout of a later cellgan"), "cell/cell");
}

TEST(StatusRender, JsonSurvivesBytesThatAreNotUtf8) {
  StatusBoard board = two_by_two();
  board.event("bad \xff\xfe bytes", t0);
  const auto j = nlohmann::json::parse(status_json(board.snapshot(t0)));
  EXPECT_EQ(j["events"].size(), 1u);
}

TEST(StatusRender, MetricsAreWellFormedPrometheusTextWithTheSameFigures) {
  const std::string text = status_metrics(known_state());
  // Every line is a HELP or TYPE comment, or a sample: name{labels} value.
  const std::regex help(R"(# HELP (cellgan_[a-z_]+) .+)"), type(R"(# TYPE (cellgan_[a-z_]+) (gauge|counter))");
  const std::regex sample(R"((cellgan_[a-z_]+)(\{([a-z_]+="([^"\\]|\\.)*",?)+\})? (-?[0-9.e+-]+|NaN|[+-]Inf))");
  std::istringstream in(text);
  std::set<std::string> typed;
  int samples = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, help)) continue;
    if (std::regex_match(line, m, type)) {
      EXPECT_TRUE(typed.insert(m[1]).second) << "two TYPE lines for " << m[1];
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, m, sample)) << "not a sample: " << line;
    EXPECT_TRUE(typed.count(m[1])) << "a sample before its TYPE: " << line;
    ++samples;
  }
  EXPECT_GT(samples, 10);
  EXPECT_NE(text.find("cellgan_phase{phase=\"training\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("cellgan_grid_rows 2\n"), std::string::npos);
  EXPECT_NE(text.find("cellgan_generations_done 3\n"), std::string::npos);
  EXPECT_NE(text.find("cellgan_cell_generation{cell=\"1\",worker=\"1\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("cellgan_cell_score{cell=\"1\",worker=\"1\",objective=\"fid\"} 20.25\n"), std::string::npos);
  EXPECT_EQ(text.find("cellgan_cell_score{cell=\"2\""), std::string::npos) << "no sample for an unknown score";
  EXPECT_NE(text.find("cellgan_worker_heartbeat_age_seconds{worker=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("cellgan_worker_state{worker=\"2\",state=\"late \\\"slow\\\"\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("cellgan_eta_seconds 4\n"), std::string::npos);
  EXPECT_NE(text.find("cellgan_events_total 1\n"), std::string::npos);
}

TEST(ProgressLine, DrawsTheBarTheGenerationTheBestScoreAndTheEta) {
  EXPECT_EQ(progress_line(Progress{5, 10, "fid", 2, 31.20344, 65.2}, 10),
            "[#####-----] 5/10 generations · best fid 31.2034 (cell 2) · ETA 1m05s");
  EXPECT_EQ(progress_line(Progress{0, 3, "mode_tvd", std::nullopt, std::nullopt, std::nullopt}, 6),
            "[------] 0/3 generations · ETA ?");
  EXPECT_EQ(progress_line(Progress{3, 3, "mode_tvd", 0, 0.125, 0.0}, 6),
            "[######] 3/3 generations · best mode_tvd 0.1250 (cell 0) · ETA 0s");
  EXPECT_EQ(progress_line(Progress{1, 3, "fid", 1, NAN, 4.0}, 3), "[#--] 1/3 generations · ETA 4s");
}

TEST(ProgressLine, ShortDurations) {
  EXPECT_EQ(short_duration(42.4), "42s");
  EXPECT_EQ(short_duration(187), "3m07s");
  EXPECT_EQ(short_duration(2 * 3600 + 5 * 60 + 20), "2h05m");
  EXPECT_EQ(short_duration(-1), "?");
  EXPECT_EQ(short_duration(INFINITY), "?");
}

}  // namespace
}  // namespace cellgan
