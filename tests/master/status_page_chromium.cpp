// The status page (GET /) in a real headless Chromium (Debian's chromium,
// deploy/install-deps.sh): the page fetches /status itself and draws one
// square per cell, with its worker and state, coloured by score. Checked
// twice: on a board in a known state, from the DOM and from the pixels of a
// screenshot; and during a real toy run (one process, the status server
// on), from the DOM, with its curves (Chart.js from /chart.js, the points
// from /history). And report.html, opened from a copy after its run folder
// is deleted: the curves hold every generation's points, with nothing
// fetched.
//
// CTest label "chromium" (ctest -LE chromium leaves it out); without
// chromium the tests fail, saying how to install it.
#include <gtest/gtest.h>
#include <png.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <regex>

#include "master/status_server.h"
#include "tests/app/job_files.h"
#include "tests/app/one_process_job.h"
#include "tests/common/test_files.h"
#include "tests/master/http_client.h"

namespace cellgan {
namespace {

using test::read_bytes;
using test::TempDir;

// Runs chromium headless on `url` with `what` (--dump-dom or
// --screenshot=PATH); returns its standard output.
std::string chromium(const TempDir& tmp, const std::string& url, const std::string& what) {
  const std::string program = CELLGAN_CHROMIUM;
  if (program.empty() || !std::filesystem::exists(program)) {
    ADD_FAILURE() << "chromium not found: install Debian's chromium (deploy/install-deps.sh), reconfigure, or leave "
                     "this test out with ctest -LE chromium";
    return "";
  }
  const std::string out = tmp.file("chromium.out"), err = tmp.file("chromium.err");
  // Its own profile folder: several may run at once.
  const std::string command = fmt::format(
      "timeout 90 {} --headless --no-sandbox --disable-gpu --no-first-run --force-color-profile=srgb "
      "--hide-scrollbars --user-data-dir={} --window-size=900,700 --virtual-time-budget=3000 {} {} > {} 2> {}",
      program, tmp.file("profile"), what, url, out, err);
  EXPECT_EQ(std::system(command.c_str()), 0) << read_bytes(err);
  return read_bytes(out);
}

// The curves a page drew (pages/curves.js): each holder's data-points by
// its id ("objective", ...), and #curves's data-state and data-generations.
struct DrawnCurves {
  std::string state;
  int generations = -1;
  std::map<std::string, int> points;
};

DrawnCurves drawn_curves(const std::string& dom) {
  DrawnCurves out;
  std::smatch m;
  if (std::regex_search(dom, m, std::regex(R"re(<div id="curves" data-state="([a-z-]+)"(?: data-generations="(\d+)")?)re"))) {
    out.state = m[1];
    if (m[2].matched) out.generations = std::stoi(m[2]);
  }
  const std::regex holder(R"re(<div class="curve" id="curve-([a-z_]+)" data-points="(\d+)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), holder); it != std::sregex_iterator(); ++it)
    out.points[(*it)[1]] = std::stoi((*it)[2]);
  return out;
}

// A 2x2 run's curves at `generations`: one line per cell, plus the best of
// all on the objective; G and D learning rates per cell.
void expect_curves_of_2x2(const DrawnCurves& curves, int generations) {
  EXPECT_EQ(curves.state, "drawn");
  EXPECT_EQ(curves.points.count("objective") ? curves.points.at("objective") : -1, 5 * generations);
  EXPECT_EQ(curves.points.count("generator_loss") ? curves.points.at("generator_loss") : -1, 4 * generations);
  EXPECT_EQ(curves.points.count("discriminator_loss") ? curves.points.at("discriminator_loss") : -1, 4 * generations);
  EXPECT_EQ(curves.points.count("learning_rate") ? curves.points.at("learning_rate") : -1, 8 * generations);
}

struct DrawnCell {
  int worker = 0;
  std::string state;
  std::string background;
};

// The cells the page drew, by cell id, from a DOM dump.
std::map<int, DrawnCell> drawn_cells(const std::string& dom) {
  std::map<int, DrawnCell> cells;
  const std::regex cell(
      R"re(<div class="cell [a-z]+" data-cell="(\d+)" data-worker="(\d+)" data-state="([a-z]+)"[^>]*style="background: (rgb\([0-9, ]+\));")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), cell); it != std::sregex_iterator(); ++it)
    cells[std::stoi((*it)[1])] = DrawnCell{std::stoi((*it)[2]), (*it)[3], (*it)[4]};
  return cells;
}

// Pixels of each colour in a PNG, as 0xRRGGBB.
std::map<std::uint32_t, int> colour_counts(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  std::map<std::uint32_t, int> counts;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << "cannot read " << path << ": " << image.message;
    return counts;
  }
  image.format = PNG_FORMAT_RGB;
  std::vector<png_byte> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) {
    ADD_FAILURE() << "cannot decode " << path << ": " << image.message;
    return counts;
  }
  for (std::size_t i = 0; i + 2 < pixels.size(); i += 3)
    ++counts[(std::uint32_t(pixels[i]) << 16) | (std::uint32_t(pixels[i + 1]) << 8) | pixels[i + 2]];
  return counts;
}

// 3x3, workers 1, 2, 3 own a row each; cell c scored c + 1 but cell 8 not
// yet; worker 3 is dead.
struct KnownBoard {
  KnownBoard() : board(3, 3, "coevolution", "fid", 20, 3, {1, 1, 1, 2, 2, 2, 3, 3, 3}, StatusBoard::Clock::now()) {
    board.set_phase("training");
    for (int c = 0; c < 8; ++c) board.cell_generation(c, c / 3 + 1, 5, c + 1.0);
    board.set_worker_state(3, "dead");
  }
  StatusBoard board;
};

TEST(StatusPageInChromium, DrawsEveryCellWithItsWorkerAndStateColouredByScore) {
  TempDir tmp;
  KnownBoard known;
  StatusServer server(known.board, StatusServerOptions{});
  const std::map<int, DrawnCell> cells = drawn_cells(chromium(tmp, server.url(), "--dump-dom"));
  ASSERT_EQ(cells.size(), 9u) << "the page did not draw the 3x3 grid";
  for (int c = 0; c < 9; ++c) {
    EXPECT_EQ(cells.at(c).worker, c / 3 + 1) << "cell " << c;
    EXPECT_EQ(cells.at(c).state, c < 6 ? "training" : "dead") << "cell " << c;
  }
  EXPECT_EQ(cells.at(0).background, "rgb(26, 152, 80)") << "the lowest score is green";
  EXPECT_EQ(cells.at(7).background, "rgb(215, 48, 39)") << "the highest score is red";
  EXPECT_EQ(cells.at(8).background, "rgb(160, 160, 160)") << "no score is grey";
  EXPECT_NE(cells.at(3).background, cells.at(4).background) << "different scores, different colours";
}

TEST(StatusPageInChromium, TheScreenshotShowsTheCellsInTheirColours) {
  TempDir tmp;
  KnownBoard known;
  StatusServer server(known.board, StatusServerOptions{});
  const std::string png = tmp.file("page.png");
  chromium(tmp, server.url(), "--screenshot=" + png);
  const auto counts = colour_counts(png);
  // A 96x96 square less its text: thousands of pixels of the cell's colour.
  EXPECT_GT(counts.count(0x1a9850) ? counts.at(0x1a9850) : 0, 4000) << "no green square (cell 0)";
  EXPECT_GT(counts.count(0xd73027) ? counts.at(0xd73027) : 0, 4000) << "no red square (cell 7)";
  EXPECT_GT(counts.count(0xa0a0a0) ? counts.at(0xa0a0a0) : 0, 4000) << "no grey square (cell 8)";
}

TEST(StatusPageInChromium, DrawsTheGridOfARealRunWhileItTrains) {
  TempDir tmp;
  const int port = test::free_port();
  const std::string config = test::toy_config_with_status(tmp, tmp.file("run"), 200, port);
  auto job = std::async(std::launch::async, [&] { return test::run_one_process_job(config, 2); });
  const auto ended = [&] { return job.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
  bool training = false;
  while (!training && !ended()) {
    const auto a = test::http_get(port, "/status");
    if (a.status == 200) {
      const auto j = nlohmann::json::parse(a.body);
      training = j["phase"] == "training" && j["generations"]["done"].get<int>() >= 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string dom = training ? chromium(tmp, fmt::format("http://127.0.0.1:{}/", port), "--dump-dom") : "";
  const bool loaded_during_the_run = !ended();
  const test::JobOutcome out = job.get();
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  ASSERT_TRUE(training) << "never saw the run training on /status";
  ASSERT_TRUE(loaded_during_the_run) << "the run ended before Chromium was done: the test's run is too short";
  const std::map<int, DrawnCell> cells = drawn_cells(dom);
  ASSERT_EQ(cells.size(), 4u) << dom;
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(cells.at(c).worker, c / 2 + 1) << "cell " << c;  // W = 2 on 2x2: a row each
    EXPECT_EQ(cells.at(c).state, "training") << "cell " << c;
    EXPECT_NE(cells.at(c).background, "rgb(160, 160, 160)") << "cell " << c << " has no score";
  }
  EXPECT_NE(dom.find("rank 2"), std::string::npos) << "the workers' table";
  const DrawnCurves curves = drawn_curves(dom);
  ASSERT_GE(curves.generations, 1) << "no curves drawn from /history";
  expect_curves_of_2x2(curves, curves.generations);
}

TEST(RunReportInChromium, OpensWithEveryGenerationsCurvesAfterTheRunIsGone) {
  TempDir tmp;
  const std::string run = tmp.file("run");
  const auto out = test::run_one_process_job(test::toy_config(tmp, "toy", run, {{"generations: 4,", "generations: 6,"}}), 2);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  const std::string report = read_bytes(run + "/report.html");
  ASSERT_FALSE(report.empty()) << "the run wrote no report.html";
  // Nothing to fetch: no address, no script or image from elsewhere.
  EXPECT_EQ(report.find("src=\"http"), std::string::npos);
  EXPECT_EQ(report.find("href=\"http"), std::string::npos);
  EXPECT_NE(report.find("data:image/png;base64,"), std::string::npos) << "samples.png inlined";
  const std::string copy = tmp.file("copy.html");
  test::write_bytes(copy, report);
  std::filesystem::remove_all(run);
  const std::string dom = chromium(tmp, "file://" + copy, "--dump-dom");
  const DrawnCurves curves = drawn_curves(dom);
  EXPECT_EQ(curves.generations, 6);
  expect_curves_of_2x2(curves, 6);
  EXPECT_NE(dom.find("data-title=\"mode TVD of the mixture (lower is better)\""), std::string::npos)
      << "a toy run's objective, named as what it is";
}

}  // namespace
}  // namespace cellgan
