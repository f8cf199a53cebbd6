// Whole coevolution jobs (in one process) with the GAN variants of issue 20:
// training.loss wgan_gp on the toy ring, network.kind sngan on images, the
// dcgan critic on images, and sngan with wgan_gp stopped and resumed. Each run's losses are finite, and
// it is deterministic: the same ensemble.bin and metrics.jsonl (but the
// timings) to the bit, run again or with another number of workers, or
// stopped and resumed from a checkpoint (which must carry the spectral
// norms' u buffers for that).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/dataset.h"
#include "common/error.h"
#include "common/idx.h"
#include "common/nn/classifier.h"
#include "tests/app/job_files.h"
#include "tests/app/one_process_job.h"
#include "tests/common/test_files.h"
#include "tests/nn/synthetic_images.h"

namespace cellgan {
namespace {

using test::JobOptions;
using test::metrics_without_seconds;
using test::read_bytes;
using test::run_one_process_job;
using test::TempDir;
using test::toy_config;
using test::write_bytes;

// Every record's generator and discriminator loss is finite; returns how
// many records there were.
std::size_t expect_finite_losses(const std::string& dir) {
  const std::vector<std::string> lines = metrics_without_seconds(dir);
  for (const std::string& line : lines) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_TRUE(std::isfinite(j.at("generator_loss").get<double>())) << line;
    EXPECT_TRUE(std::isfinite(j.at("discriminator_loss").get<double>())) << line;
  }
  return lines.size();
}

struct JobRun {
  std::string ensemble;
  std::vector<std::string> metrics;
};

JobRun run_of(const std::string& config, const std::string& dir, int workers, const JobOptions& options = {}) {
  const auto out = run_one_process_job(config, workers, options);
  EXPECT_TRUE(out.result.has_value()) << out.master_error;
  EXPECT_EQ(out.worker_codes, std::vector<int>(static_cast<std::size_t>(workers), kExitOk));
  return {read_bytes(dir + "/ensemble.bin"), metrics_without_seconds(dir)};
}

TEST(GanVariantsJob, WganGpOnTheRingIsFiniteAndDeterministicForW12) {
  TempDir tmp;
  // n_critic 2 over 20 batches: 10 generator and 20 critic steps a generation.
  const auto config = [&](const std::string& name) {
    return toy_config(tmp, name, tmp.file(name),
                      {{"learning_rate: 1.0e-3", "learning_rate: 1.0e-3, loss: wgan_gp, n_critic: 2"}});
  };
  const JobRun first = run_of(config("first"), tmp.file("first"), 1);
  EXPECT_EQ(expect_finite_losses(tmp.file("first")), 16u);  // 4 cells x 4 generations
  const JobRun again = run_of(config("again"), tmp.file("again"), 1);
  const JobRun two = run_of(config("two"), tmp.file("two"), 2);
  EXPECT_TRUE(again.ensemble == first.ensemble) << "ensemble.bin differs when run again";
  EXPECT_EQ(again.metrics, first.metrics);
  EXPECT_TRUE(two.ensemble == first.ensemble) << "ensemble.bin differs with 2 workers";
  EXPECT_EQ(two.metrics, first.metrics);
  // It is not the bce run.
  const JobRun bce = run_of(toy_config(tmp, "bce", tmp.file("bce")), tmp.file("bce"), 1);
  EXPECT_FALSE(bce.ensemble == first.ensemble);
}

// A small synthetic image dataset (tests/nn/synthetic_images.h) in IDX
// files, with a score classifier trained on it for one epoch.
class ImageJob : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = std::make_unique<TempDir>();
    for (const auto& [prefix, count, seed] :
         std::vector<std::tuple<std::string, std::int64_t, std::uint32_t>>{{"train", 400, 1}, {"t10k", 100, 2}}) {
      std::vector<std::uint8_t> labels;
      write_idx_images(folder_->file(prefix + "-images-idx3-ubyte"), test::synthetic_idx_images(count, seed, labels));
      write_idx_labels(folder_->file(prefix + "-labels-idx1-ubyte"), labels);
    }
    DataConfig data;
    data.dataset = DatasetKind::kIdx;
    data.path = folder_->path().string();
    train_classifier(load_image_data(data, Split::kTrain), load_image_data(data, Split::kTest), /*epochs=*/1,
                     /*seed=*/1, folder_->file("classifier.pt"));
  }
  static void TearDownTestSuite() { folder_.reset(); }

  // A 1x2 grid of `network` pairs trained with `loss` for 4 short
  // generations, checkpointed after each.
  std::string config(const std::string& name, const std::string& network, const std::string& loss) {
    const std::string path = tmp_.file(name + ".yaml");
    write_bytes(path, fmt::format(R"(seed: 3
output_dir: {}
data: {{dataset: idx, path: {}}}
network: {{kind: {}, latent_dim: 16}}
grid: {{rows: 1, cols: 2}}
training: {{generations: 4, batches_per_generation: 6, batch_size: 16, fitness_samples: 32, score_samples: 32, loss: {}, n_critic: 2}}
evaluation: {{final_samples: 64, grid_images: 4, preview_every: 0}}
runtime: {{heartbeat_interval_ms: 100}}
checkpoint: {{every: 1, keep: 2}}
)",
                                  dir(name), folder_->path().string(), network, loss));
    return path;
  }
  std::string dir(const std::string& name) const { return tmp_.file(name); }

  static std::unique_ptr<TempDir> folder_;
  TempDir tmp_;
};
std::unique_ptr<TempDir> ImageJob::folder_;

TEST_F(ImageJob, SnganIsFiniteAndDeterministicForW12) {
  const JobRun first = run_of(config("first", "sngan", "bce"), dir("first"), 1);
  EXPECT_EQ(expect_finite_losses(dir("first")), 8u);  // 2 cells x 4 generations
  const JobRun again = run_of(config("again", "sngan", "bce"), dir("again"), 1);
  const JobRun two = run_of(config("two", "sngan", "bce"), dir("two"), 2);
  EXPECT_TRUE(again.ensemble == first.ensemble) << "ensemble.bin differs when run again";
  EXPECT_EQ(again.metrics, first.metrics);
  EXPECT_TRUE(two.ensemble == first.ensemble) << "ensemble.bin differs with 2 workers";
  EXPECT_EQ(two.metrics, first.metrics);
}

TEST_F(ImageJob, TheDcganCriticTrainsWithWganGp) {
  const JobRun two = run_of(config("critic", "dcgan", "wgan_gp"), dir("critic"), 2);
  EXPECT_EQ(expect_finite_losses(dir("critic")), 8u);
  EXPECT_FALSE(two.ensemble.empty());
}

TEST_F(ImageJob, SnganWithWganGpStoppedAndResumedEndsAsTheUninterruptedRun) {
  const JobRun reference = run_of(config("reference", "sngan", "wgan_gp"), dir("reference"), 1);
  EXPECT_EQ(expect_finite_losses(dir("reference")), 8u);
  const std::string config_path = config("stopped", "sngan", "wgan_gp");
  JobOptions stop;
  stop.stop_after = 1;
  const auto stopped = run_one_process_job(config_path, 2, stop);
  ASSERT_FALSE(stopped.result.has_value()) << "the run finished instead of stopping";
  ASSERT_EQ(stopped.master_code, kExitRestart) << stopped.master_error;
  JobOptions resume;
  resume.resume = "auto";
  const JobRun resumed = run_of(config_path, dir("stopped"), 1, resume);
  EXPECT_NE(read_bytes(dir("stopped") + "/events.log").find("resuming after generation"), std::string::npos);
  EXPECT_TRUE(resumed.ensemble == reference.ensemble) << "ensemble.bin differs after the resume";
  EXPECT_EQ(resumed.metrics, reference.metrics);
}

}  // namespace
}  // namespace cellgan
