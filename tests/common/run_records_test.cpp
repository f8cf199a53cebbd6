// The two records of a run folder (common/run_records.h): metrics.jsonl's
// lines and result.json, written and read back.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/error.h"
#include "common/run_files.h"
#include "common/run_records.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::TempDir;
using test::write_bytes;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

GenerationRecord sample_record() {
  GenerationRecord r;
  r.cell = 2;
  r.generation = 3;
  r.generator_loss = kNaN;
  r.discriminator_loss = 1.5;
  r.scores = {{"fid", 12.25}, {"tvd", std::numeric_limits<double>::infinity()}};
  r.generator_lrs = {0.001};
  r.discriminator_lrs = {0.002, kNaN};
  r.mixture_weights = {0.25, 0.75};
  r.generators_replaced = 1;
  r.mixture_improved = true;
  r.seconds = {{"train", 2.5}, {"idle", 0.125}};
  r.counts = {{"images_per_second", 10.0}};
  r.preview = {0.5f};           // not part of a line
  r.events = {"not a line"};    // nor this
  return r;
}

TEST(MetricsRecord, ALineIsOneJsonObjectWithItsNewlineAndNonFiniteNumbersAsNull) {
  EXPECT_EQ(to_json_line(sample_record()),
            R"({"cell":2,"counts":{"images_per_second":10.0},"discriminator_loss":1.5,"discriminator_lrs":[0.002,null],)"
            R"("discriminators_replaced":0,"generation":3,"generator_loss":null,"generator_lrs":[0.001],)"
            R"("generators_replaced":1,"mixture_improved":true,"mixture_weights":[0.25,0.75],)"
            R"("scores":{"fid":12.25,"tvd":null},"seconds":{"idle":0.125,"train":2.5}})"
            "\n");
  GenerationRecord no_counts = sample_record();
  no_counts.counts.clear();
  EXPECT_EQ(to_json_line(no_counts).find("counts"), std::string::npos) << "counts only when it has any";
}

TEST(MetricsRecord, RoundTripsEveryFieldOfTheLine) {
  const GenerationRecord in = sample_record();
  std::string line = to_json_line(in);
  line.pop_back();
  std::string why;
  const std::optional<GenerationRecord> out = parse_metrics_line(line, &why);
  ASSERT_TRUE(out) << why;
  EXPECT_EQ(out->cell, 2);
  EXPECT_EQ(out->generation, 3);
  EXPECT_TRUE(std::isnan(out->generator_loss)) << "null reads back as NaN";
  EXPECT_EQ(out->discriminator_loss, 1.5);
  EXPECT_EQ(out->scores.at("fid"), 12.25);
  EXPECT_TRUE(std::isnan(out->scores.at("tvd")));
  EXPECT_EQ(out->generator_lrs, std::vector<double>({0.001}));
  ASSERT_EQ(out->discriminator_lrs.size(), 2u);
  EXPECT_TRUE(std::isnan(out->discriminator_lrs[1]));
  EXPECT_EQ(out->mixture_weights, in.mixture_weights);
  EXPECT_EQ(out->generators_replaced, 1);
  EXPECT_EQ(out->discriminators_replaced, 0);
  EXPECT_TRUE(out->mixture_improved);
  EXPECT_EQ(out->seconds, in.seconds);
  EXPECT_EQ(out->counts, in.counts);
  EXPECT_TRUE(out->preview.empty());
  EXPECT_TRUE(out->events.empty());
  EXPECT_EQ(to_json_line(*out), line + "\n") << "written again, the same bytes";
}

TEST(MetricsRecord, NeedsCellAndGenerationAndValuesOfTheirKind) {
  const std::optional<GenerationRecord> least = parse_metrics_line(R"({"generation": 4, "cell": 1})");
  ASSERT_TRUE(least);
  EXPECT_EQ(least->generation, 4);
  EXPECT_TRUE(std::isnan(least->generator_loss)) << "a missing loss reads as NaN";
  EXPECT_TRUE(least->seconds.empty());
  for (const char* bad : {R"({"cell": 1})", R"({"generation": 1})", R"([1, 2])", R"({"cell": 0, "generation": 1,)",
                          R"({"cell": 0, "generation": "one"})", R"({"cell": 0, "generation": 1, "seconds": [1]})",
                          R"({"cell": 0, "generation": 1, "scores": {"fid": "low"}})",
                          R"({"cell": 0, "generation": 1, "generator_lrs": 0.1})"}) {
    std::string why;
    EXPECT_FALSE(parse_metrics_line(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(MetricsRecord, ReadsTheCompleteLinesOfAFileAndNamesABadOneByFileAndLine) {
  TempDir tmp;
  const std::string path = tmp.file(run_files::kMetrics);
  GenerationRecord r = sample_record();
  std::string text = to_json_line(r) + "\n  \n";
  r.generation = 4;
  text += to_json_line(r);
  write_bytes(path, text + R"({"cell": 0, "gener)");  // the last line has no newline yet: left out
  const std::vector<GenerationRecord> records = read_metrics(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].generation, 3);
  EXPECT_EQ(records[1].generation, 4);
  EXPECT_TRUE(read_metrics(tmp.file("absent.jsonl")).empty());

  write_bytes(path, text + "{\"cell\": 0}\n" + to_json_line(r));
  try {
    read_metrics(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":5: not a metrics record: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("generation"), std::string::npos) << e.what();
  }
}

ResultRecord sample_result() {
  ResultRecord r;
  r.best = r.best_label = "cell 1";
  r.best_cell = 1;
  r.objective = "mode_tvd";
  r.scores = {{"mode_tvd", 0.5}, {"tvd", kNaN}};
  r.mixture_weights = {0.25, 0.75};
  r.final_samples = 100;
  r.cells = {{0, {{"mode_tvd", 0.75}}}, {1, {{"mode_tvd", 0.5}}}};
  r.master_kernels = "openblas";
  r.worker_kernels = {"openblas"};
  r.master_device = "cpu";
  r.worker_devices = {"cpu"};
  r.precision = "bf16";
  r.seconds = 2.5;
  return r;
}

TEST(ResultRecord, IsOneIndentedJsonObjectWithItsNewline) {
  EXPECT_EQ(to_json(sample_result()), R"({
  "best": "cell 1",
  "best_cell": 1,
  "best_label": "cell 1",
  "blas_kernels": {
    "master": "openblas",
    "workers": [
      "openblas"
    ]
  },
  "cells": [
    {
      "cell": 0,
      "scores": {
        "mode_tvd": 0.75
      }
    },
    {
      "cell": 1,
      "scores": {
        "mode_tvd": 0.5
      }
    }
  ],
  "device": {
    "master": "cpu",
    "workers": [
      "cpu"
    ]
  },
  "final_samples": 100,
  "grid_ensemble": null,
  "mixture_weights": [
    0.25,
    0.75
  ],
  "objective": "mode_tvd",
  "precision": "bf16",
  "scores": {
    "mode_tvd": 0.5,
    "tvd": null
  },
  "seconds": 2.5
}
)");
}

TEST(ResultRecord, RoundTripsThroughTheFile) {
  TempDir tmp;
  ResultRecord in = sample_result();
  in.grid_ensemble = std::map<std::string, double>{{"mode_tvd", 0.25}};
  EXPECT_FALSE(read_result(tmp.path().string())) << "no result.json: an unfinished run";
  write_bytes(tmp.file(run_files::kResult), to_json(in));
  const std::optional<ResultRecord> out = read_result(tmp.path().string());
  ASSERT_TRUE(out);
  EXPECT_EQ(out->best, "cell 1");
  EXPECT_EQ(out->best_cell, 1);
  EXPECT_EQ(out->best_label, "cell 1");
  EXPECT_EQ(out->objective, "mode_tvd");
  EXPECT_EQ(out->scores.at("mode_tvd"), 0.5);
  EXPECT_TRUE(std::isnan(out->scores.at("tvd"))) << "null reads back as NaN";
  EXPECT_EQ(out->mixture_weights, in.mixture_weights);
  EXPECT_EQ(out->final_samples, 100);
  ASSERT_EQ(out->cells.size(), 2u);
  EXPECT_EQ(out->cells[1].cell, 1);
  EXPECT_EQ(out->cells[1].scores, in.cells[1].scores);
  EXPECT_EQ(out->grid_ensemble, in.grid_ensemble);
  EXPECT_EQ(out->worker_kernels, in.worker_kernels);
  EXPECT_EQ(out->master_device, "cpu");
  EXPECT_EQ(out->precision, "bf16");
  EXPECT_EQ(out->seconds, 2.5);
  EXPECT_EQ(to_json(*out), to_json(in)) << "written again, the same bytes";
}

TEST(ResultRecord, NeedsScoresAndSecondsAndNamesTheFileOtherwise) {
  const ResultRecord old = parse_result(R"({"best": "cell 0", "scores": {"fid": 3}, "seconds": 1})", "r.json");
  EXPECT_EQ(old.best, "cell 0");
  EXPECT_EQ(old.best_label, "") << "a result of an older cellgan has no best_label";
  EXPECT_FALSE(old.grid_ensemble);
  for (const char* bad : {R"({"seconds": 1})", R"({"scores": {}})", R"({"scores": [], "seconds": 1})",
                          R"({"scores": {}, "seconds": 1, "cells": [{"cell": 0}]})", "{\"scores\": {}, \"seconds\""}) {
    try {
      parse_result(bad, "dir/result.json");
      ADD_FAILURE() << "expected InputError for " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("dir/result.json: not a result of cellgan: ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace cellgan
