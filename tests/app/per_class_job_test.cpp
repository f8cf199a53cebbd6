// layout: per_class as whole jobs in one process, on MNIST (skipped when
// data/mnist with its classifier.pt is not there: deploy/prepare-data.sh):
// - a short run's class generators make their classes, as the score
//   classifier sees them, and classes.json holds the training data's shares;
// - a stopped run resumed with another worker count ends with the
//   ensemble.bin and metrics.jsonl of the run that never stopped;
// - more workers than classes is one line and exit 2.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "common/checkpoint_store.h"
#include "common/dataset.h"
#include "common/error.h"
#include "common/nn/class_generator.h"
#include "common/nn/classifier.h"
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

const std::string kMnist = std::string(CELLGAN_SOURCE_DIR) + "/data/mnist";

bool have_mnist() { return fs::exists(kMnist + "/train-images-idx3-ubyte") && fs::exists(kMnist + "/classifier.pt"); }

// Three digits, small MLP pairs, a few hundred steps each.
std::string mnist_config(const TempDir& tmp, const std::string& name, int generations, int classes = 3,
                         const std::string& extra = "") {
  const std::string text = fmt::format(R"(seed: 5
output_dir: {dir}
layout: per_class
data: {{dataset: mnist, path: {mnist}}}
network: {{kind: mlp, latent_dim: 32}}
grid: {{rows: {classes}, cols: 1}}
training: {{generations: {generations}, population_size: 1, tournament_size: 1, batch_size: 50,
           batches_per_generation: 40, learning_rate: 1.0e-3, discriminator_skip: 0, mutation_probability: 0.0,
           fitness_samples: 100, score_samples: 100}}
evaluation: {{classifier: {mnist}/classifier.pt, final_samples: 600, grid_images: 30, preview_every: 0,
             grid_ensemble: false}}
runtime: {{threads: 1}}
{extra})",
                                       fmt::arg("dir", tmp.file(name)), fmt::arg("mnist", kMnist),
                                       fmt::arg("classes", classes), fmt::arg("generations", generations),
                                       fmt::arg("extra", extra));
  const std::string path = tmp.file(name + ".yaml");
  write_bytes(path, text);
  return path;
}

TEST(PerClassJob, EachClassGeneratorMakesItsClassAsTheClassifierSees) {
  if (!have_mnist()) GTEST_SKIP() << "no MNIST with classifier.pt in " << kMnist;
  TempDir tmp;
  const auto out = run_one_process_job(mnist_config(tmp, "run", 5), 2);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_EQ(out.worker_codes, (std::vector<int>{kExitOk, kExitOk}));
  const std::string dir = tmp.file("run");
  EXPECT_EQ(metrics_without_seconds(dir).size(), 15u);  // 3 classes x 5 generations
  for (const char* file : {"ensemble.bin", "classes.json", "classes.png", "samples.png", "summary.txt"})
    EXPECT_TRUE(fs::exists(dir + "/" + file)) << file;

  // The classes' shares of the training images, in classes.json.
  DataConfig data;
  data.path = kMnist;
  const ImageBytes train = load_image_bytes(data, Split::kTrain);
  std::vector<double> counts(3, 0.0);
  for (std::uint8_t label : train.labels)
    if (label < 3) counts[label] += 1.0;
  const double total = counts[0] + counts[1] + counts[2];
  ClassGenerator generator = ClassGenerator::load(dir + "/ensemble.bin");
  ASSERT_EQ(generator.classes(), 3);
  for (std::size_t c = 0; c < 3; ++c) EXPECT_NEAR(generator.proportions()[c], counts[c] / total, 1e-12);

  // sample --class c gives c: checked here with the classifier on fresh samples...
  ScoreClassifier classifier = load_classifier(kMnist + "/classifier.pt");
  for (int c = 0; c < 3; ++c) {
    const double accuracy = class_accuracy(classifier, generator.sample_class(c, 300, 77 + c), c);
    EXPECT_GE(accuracy, 0.6) << "class " << c;
  }
  // ... and by the run itself, per cell and on average, in result.json.
  const auto result = nlohmann::json::parse(read_bytes(dir + "/result.json"));
  EXPECT_EQ(result.at("best"), "grid");
  ASSERT_EQ(result.at("cells").size(), 3u);
  for (const auto& cell : result.at("cells")) EXPECT_GE(cell.at("scores").at("class_accuracy").get<double>(), 0.6);
  EXPECT_TRUE(result.at("scores").contains("fid"));
  EXPECT_TRUE(result.at("scores").contains("is"));
  EXPECT_GE(result.at("scores").at("class_accuracy").get<double>(), 0.6);
}

TEST(PerClassJob, AStoppedRunResumedWithAnotherWorkerCountEndsAsTheUninterruptedOne) {
  if (!have_mnist()) GTEST_SKIP() << "no MNIST with classifier.pt in " << kMnist;
  TempDir tmp;
  const std::string checkpoints = "checkpoint: {every: 2, keep: 2}\n";
  const auto reference = run_one_process_job(mnist_config(tmp, "reference", 5, 3, checkpoints), 3);
  ASSERT_TRUE(reference.result.has_value()) << reference.master_error;

  const std::string config = mnist_config(tmp, "run", 5, 3, checkpoints);
  const std::string dir = tmp.file("run");
  JobOptions stop;
  stop.stop_after = 1;
  const auto stopped = run_one_process_job(config, 1, stop);
  ASSERT_FALSE(stopped.result.has_value()) << "the run finished instead of stopping";
  EXPECT_EQ(stopped.master_code, kExitRestart) << stopped.master_error;
  std::vector<std::string> skipped;
  const auto point = newest_complete_checkpoint(dir, skipped);
  ASSERT_TRUE(point.has_value());
  EXPECT_LT(point->manifest.generation, 5);

  JobOptions resume;
  resume.resume = "auto";
  const auto out = run_one_process_job(config, 2, resume);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_TRUE(read_bytes(dir + "/ensemble.bin") == read_bytes(tmp.file("reference") + "/ensemble.bin"))
      << "ensemble.bin differs";
  EXPECT_EQ(metrics_without_seconds(dir), metrics_without_seconds(tmp.file("reference")));
  EXPECT_EQ(read_bytes(dir + "/classes.json"), read_bytes(tmp.file("reference") + "/classes.json"));
}

TEST(PerClassJob, MoreWorkersThanClassesIsOneLineAndExit2) {
  if (!have_mnist()) GTEST_SKIP() << "no MNIST with classifier.pt in " << kMnist;
  TempDir tmp;
  const auto out = run_one_process_job(mnist_config(tmp, "run", 1, 2), 3);
  EXPECT_FALSE(out.result.has_value());
  EXPECT_EQ(out.master_code, kExitBadInput);
  EXPECT_EQ(out.master_error.find('\n'), std::string::npos) << out.master_error;
  for (const char* part : {"workers", "3 worker ranks", "per_class", "2 classes", "1..2"})
    EXPECT_NE(out.master_error.find(part), std::string::npos) << part << " missing in: " << out.master_error;
  EXPECT_EQ(out.worker_codes, std::vector<int>(3, kExitBadInput));
}

TEST(PerClassJob, ATrainLimitThatStarvesAClassIsOneLineAtStart) {
  if (!have_mnist()) GTEST_SKIP() << "no MNIST with classifier.pt in " << kMnist;
  TempDir tmp;
  const std::string path = mnist_config(tmp, "run", 1, 3);
  std::string text = read_bytes(path);
  const std::string data = "data: {dataset: mnist, path: " + kMnist + "}";
  ASSERT_NE(text.find(data), std::string::npos);
  text.replace(text.find(data), data.size(), "data: {dataset: mnist, path: " + kMnist + ", train_limit: 3}");
  write_bytes(path, text);
  const auto out = run_one_process_job(path, 2);
  EXPECT_FALSE(out.result.has_value());
  EXPECT_EQ(out.master_code, kExitBadInput);
  EXPECT_EQ(out.master_error.find('\n'), std::string::npos) << out.master_error;
  for (const char* part : {"data.train_limit 3", "expected 2 or more", "per_class"})
    EXPECT_NE(out.master_error.find(part), std::string::npos) << part << " missing in: " << out.master_error;
  EXPECT_FALSE(fs::exists(tmp.file("run") + "/metrics.jsonl")) << "training started";
}

}  // namespace
}  // namespace cellgan
