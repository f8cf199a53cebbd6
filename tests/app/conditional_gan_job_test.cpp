// The DC-CGAN baseline (network.kind dcgan_conditional) as a whole job in
// one process, on MNIST (skipped without data/mnist and its classifier.pt):
// after a short run, the generator asked for class c makes images that the
// score classifier labels c far more often than chance (0.1).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fmt/format.h>

#include <filesystem>

#include "common/nn/class_generator.h"
#include "common/nn/classifier.h"
#include "common/nn/conditional_networks.h"
#include "tests/app/one_process_job.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;
using test::run_one_process_job;
using test::TempDir;
using test::write_bytes;

const std::string kMnist = std::string(CELLGAN_SOURCE_DIR) + "/data/mnist";

TEST(ConditionalGanJob, TheGeneratorAskedForAClassMakesThatClass) {
  if (!fs::exists(kMnist + "/train-images-idx3-ubyte") || !fs::exists(kMnist + "/classifier.pt"))
    GTEST_SKIP() << "no MNIST with classifier.pt in " << kMnist;
  TempDir tmp;
  const std::string dir = tmp.file("run");
  const std::string config = tmp.file("cgan.yaml");
  write_bytes(config, fmt::format(R"(seed: 3
output_dir: {dir}
data: {{dataset: mnist, path: {mnist}}}
network: {{kind: dcgan_conditional, latent_dim: 32}}
grid: {{rows: 1, cols: 1}}
training: {{generations: {generations}, population_size: 1, tournament_size: 1, batch_size: 50,
           batches_per_generation: 50, learning_rate: 1.0e-3, discriminator_skip: 0, mutation_probability: 0.0,
           fitness_samples: 100, score_samples: 100}}
evaluation: {{classifier: {mnist}/classifier.pt, final_samples: 500, grid_images: 30, preview_every: 0,
             grid_ensemble: false}}
runtime: {{threads: 1}}
)",
                                  fmt::arg("dir", dir), fmt::arg("mnist", kMnist), fmt::arg("generations", 4)));
  const auto out = run_one_process_job(config, 1);
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  Ensemble ensemble = Ensemble::load(dir + "/ensemble.bin");
  ASSERT_TRUE(is_conditional(ensemble.shape));
  ScoreClassifier classifier = load_classifier(kMnist + "/classifier.pt");
  double mean = 0.0;
  for (int c = 0; c < 10; ++c) {
    const ClassSamples s = sample_conditional(ensemble, 100, 11 + c, c);
    ASSERT_EQ(s.labels, std::vector<std::uint8_t>(100, static_cast<std::uint8_t>(c)));
    const double accuracy = class_accuracy(classifier, s.samples, c);
    RecordProperty(fmt::format("class_{}", c), fmt::format("{:.2f}", accuracy));
    mean += accuracy / 10.0;
  }
  EXPECT_GE(mean, 0.4) << "chance is 0.1";  // 0.58 on this machine's kernels after these 200 steps
}

}  // namespace
}  // namespace cellgan
