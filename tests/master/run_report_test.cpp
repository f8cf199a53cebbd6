// report.html from a run folder (master/run_report.h).
#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "common/image_files.h"
#include "common/run_state.h"
#include "master/run_report.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::read_bytes;
using test::TempDir;
using test::write_bytes;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A stopped per_class run of 2 classes, 2 generations, with a preview.
std::string stopped_run(const TempDir& tmp) {
  const std::string dir = tmp.file("my-run");
  std::filesystem::create_directories(dir + "/previews");
  RunState s;
  s.layout = "per_class";
  s.rows = 1;
  s.cols = 2;
  s.workers = 2;
  s.generations = 10;
  s.generation = 2;
  s.status = "stopped";
  s.exit_code = 75;
  s.message = "stopped after generation 2";
  s.stretches = 2;
  s.seconds = 12.5;
  s.objective = "fid";
  EXPECT_EQ(write_run_state(dir, s), "");
  std::string metrics;
  for (int g = 1; g <= 2; ++g)
    for (int c = 0; c < 2; ++c)
      metrics += "{\"cell\":" + std::to_string(c) + ",\"generation\":" + std::to_string(g) +
                 ",\"scores\":{\"fid\":" + std::to_string(100 - g) +
                 "},\"generator_loss\":1,\"discriminator_loss\":1,\"generator_lrs\":[0.001],\"discriminator_lrs\":[0.001]}\n";
  write_bytes(dir + "/metrics.jsonl", metrics);
  write_bytes(dir + "/events.log", "2026-01-01T00:00:00 start\n2026-01-01T00:00:01 a <script>alert(1)</script> line\n");
  const std::vector<float> image(2 * 784, 0.5f);
  write_image_grid_png(dir + "/previews/gen-000001.png", image, 2, 28, 28, 2);
  write_image_grid_png(dir + "/previews/gen-000002.png", image, 2, 28, 28, 2);
  return dir;
}

TEST(RunReport, SaysWhatTheRunFolderHoldsInOneFile) {
  TempDir tmp;
  const std::string dir = stopped_run(tmp);
  const std::string path = write_run_report(dir);
  EXPECT_EQ(path, dir + "/report.html");
  const std::string html = read_bytes(path);
  EXPECT_NE(html.find("<title>cellgan report: my-run</title>"), std::string::npos);
  EXPECT_NE(html.find("<td>per_class</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>stopped after generation 2</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>2 of 10</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>12.5 s in 2 stretches</td>"), std::string::npos);
  EXPECT_EQ(count(html, "data:image/png;base64,"), 1u) << "only the newest preview";
  EXPECT_NE(html.find("the newest preview: generation 2"), std::string::npos);
  EXPECT_NE(html.find("a &lt;script&gt;alert(1)&lt;/script&gt; line"), std::string::npos) << "events escaped";
  EXPECT_NE(html.find("Events (the last 2 of 2)"), std::string::npos);
  EXPECT_NE(html.find(R"("generation":[1,2])"), std::string::npos) << "the curves' data";
  EXPECT_NE(html.find("drawCurves(JSON.parse(document.getElementById(\"history\").textContent), \"class\")"),
            std::string::npos)
      << "per_class draws one line per class";
  EXPECT_EQ(html.find("{{"), std::string::npos) << "a placeholder left unfilled";
}

// A damaged or abandoned folder still gets its report, saying what is
// wrong: a run.json left "running" with no process holding run.lock, a
// metrics line that is not a record (left out of the curves), an
// unreadable run.json.
TEST(RunReport, ADamagedOrAbandonedFolderGetsItsReportSayingSo) {
  TempDir tmp;
  const std::string dir = stopped_run(tmp);
  RunState s = *read_run_state(dir);
  s.status = "running";
  s.message = "";
  ASSERT_EQ(write_run_state(dir, s), "");
  std::string html = read_bytes(write_run_report(dir));
  EXPECT_EQ(html.find("running when last recorded"), std::string::npos) << "no run.lock: nothing known";
  write_bytes(dir + "/run.lock", "123@elsewhere\n");
  html = read_bytes(write_run_report(dir));
  EXPECT_NE(html.find("running when last recorded, but no process on this host holds run.lock"), std::string::npos);

  std::string metrics = read_bytes(dir + "/metrics.jsonl");
  metrics.insert(metrics.find('\n') + 1, "garbage\n");
  write_bytes(dir + "/metrics.jsonl", metrics);
  html = read_bytes(write_run_report(dir));
  EXPECT_NE(html.find("1 line left out of the curves, the first: " + dir + "/metrics.jsonl:2: not a metrics record"),
            std::string::npos);
  EXPECT_NE(html.find(R"("generation":[1,2])"), std::string::npos) << "the other lines' curves";

  write_bytes(dir + "/run.json", "{not json");
  html = read_bytes(write_run_report(dir));
  EXPECT_NE(html.find("<th>run.json</th><td>unreadable: "), std::string::npos);
}

TEST(RunReport, AFolderThatIsNoRunIsOneLineNamingIt) {
  TempDir tmp;
  write_bytes(tmp.file("a-file"), "x");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {tmp.file(""), "not a run folder"},
      {tmp.file("missing"), "missing: no such folder"},
      {tmp.file("a-file"), "a-file: not a folder"},
      {"", "an empty path"}};
  for (const auto& [dir, words] : cases) {
    try {
      write_run_report(dir);
      ADD_FAILURE() << dir << ": expected InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.file("report.html"))) << "no partial output";
}

}  // namespace
}  // namespace cellgan
