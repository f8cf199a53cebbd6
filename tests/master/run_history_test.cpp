// The curves read from metrics.jsonl (master/run_history.h), and the
// pages' templates (master/page_assets.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "master/page_assets.h"
#include "master/run_history.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using nlohmann::json;
using test::TempDir;
using test::write_bytes;

std::string record(int cell, int generation, const std::string& fid, double g_loss = 0.5) {
  return json::parse(R"({"cell":)" + std::to_string(cell) + R"(,"generation":)" + std::to_string(generation) +
                     R"(,"scores":{"fid":)" + fid + R"(,"tvd":0.1},"generator_loss":)" + std::to_string(g_loss) +
                     R"(,"discriminator_loss":1.25,"generator_lrs":[0.001,0.003],"discriminator_lrs":[0.002]})")
      .dump();
}

TEST(RunHistory, OneSeriesPerCellAndTheBestAndMeanOfEachGeneration) {
  TempDir tmp;
  const std::string path = tmp.file("metrics.jsonl");
  write_bytes(path, record(0, 1, "10") + "\n" + record(1, 1, "30") + "\n" + record(0, 2, "8") + "\n" +
                        record(1, 2, "null") + "\n" + record(0, 3, "4") + "\n" + record(1, 3, "6") + "\n" +
                        record(0, 4, "1"));  // the last line has no newline yet: left out
  const json h = json::parse(run_history_json(path, ""));
  EXPECT_EQ(h["objective"], "fid");
  ASSERT_EQ(h["cells"].size(), 2u);
  EXPECT_EQ(h["cells"][0]["generation"], json({1, 2, 3}));
  EXPECT_EQ(h["cells"][0]["objective"], json({10.0, 8.0, 4.0}));
  EXPECT_EQ(h["cells"][1]["objective"], json({30.0, nullptr, 6.0})) << "a missing score is a gap";
  EXPECT_DOUBLE_EQ(h["cells"][0]["generator_lr"][0].get<double>(), 0.002) << "the mean of the Gs";
  EXPECT_DOUBLE_EQ(h["cells"][0]["discriminator_lr"][0].get<double>(), 0.002);
  EXPECT_DOUBLE_EQ(h["cells"][1]["discriminator_loss"][2].get<double>(), 1.25);
  EXPECT_EQ(h["grid"]["generation"], json({1, 2, 3}));
  EXPECT_EQ(h["grid"]["best"], json({10.0, 8.0, 4.0}));
  EXPECT_EQ(h["grid"]["mean"], json({20.0, 8.0, 5.0}));
}

TEST(RunHistory, AHalfWrittenLastGenerationIsLeftOutUntilItIsWhole) {
  TempDir tmp;
  const std::string path = tmp.file("metrics.jsonl");
  write_bytes(path, record(0, 1, "10") + "\n" + record(1, 1, "30") + "\n" + record(0, 2, "8") + "\n");
  const json h = json::parse(run_history_json(path, "fid"));
  EXPECT_EQ(h["grid"]["generation"], json({1}));
  EXPECT_EQ(h["cells"][0]["generation"], json({1}));
  EXPECT_EQ(h["cells"][1]["generation"], json({1}));
}

TEST(RunHistory, TakesTheToyObjectiveFromTheLinesAndIsEmptyWithoutAFile) {
  TempDir tmp;
  const std::string path = tmp.file("metrics.jsonl");
  write_bytes(path, R"({"cell":0,"generation":1,"scores":{"frechet_2d":2.0,"mode_tvd":0.5},"generator_loss":1,)"
                    R"("discriminator_loss":1,"generator_lrs":[0.1],"discriminator_lrs":[0.1]})"
                    "\n");
  const json h = json::parse(run_history_json(path, ""));
  EXPECT_EQ(h["objective"], "mode_tvd");
  EXPECT_EQ(h["cells"][0]["objective"], json({0.5}));
  const json none = json::parse(run_history_json(tmp.file("absent.jsonl"), "fid"));
  EXPECT_TRUE(none["cells"].empty());
  EXPECT_TRUE(none["grid"]["generation"].empty());
}

TEST(RunHistory, ALineThatIsNotARecordIsNamedByFileAndLine) {
  TempDir tmp;
  const std::string path = tmp.file("metrics.jsonl");
  write_bytes(path, record(0, 1, "10") + "\n{\"cell\": 0}\n");
  try {
    run_history_json(path, "fid");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2: not a metrics record"), std::string::npos) << e.what();
  }
}

TEST(PageTemplate, FillsEveryPlaceholderOnceAndNamesAMissingOne) {
  EXPECT_EQ(fill_template("a{{X}}b{{Y}}c", {{"X", "{{Y}}"}, {"Y", "1"}}), "a{{Y}}b1c") << "values are not filled again";
  EXPECT_THROW(fill_template("a{{Z}}", {{"X", ""}}), std::invalid_argument);
  for (const std::string_view page : {status_page_template(), report_page_template()})
    EXPECT_NE(page.find("{{CURVES_JS}}"), std::string_view::npos);
  EXPECT_NE(chart_js().find("Chart.js v4"), std::string_view::npos) << "the npm bundle is built in";
  EXPECT_EQ(chart_js().find("sourceMappingURL"), std::string_view::npos) << "nothing for a page to fetch";
}

}  // namespace
}  // namespace cellgan
