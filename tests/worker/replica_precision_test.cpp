// training.precision bf16 in the data-parallel replicas (replica_trainer.h)
// on two threads over the in-process communicator, on the CPU: the
// replicas stay identical, the losses finite, and a short run improves the
// generator's score on the toy ring; and the networks and their Adam state
// stay float32 (checkpoints are float32).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>

#include "common/config.h"
#include "common/nn/scores.h"
#include "common/nn/training_data.h"
#include "tests/worker/worker_threads.h"
#include "worker/gradient_allreduce.h"
#include "worker/replica_trainer.h"

namespace cellgan {
namespace {

TEST(ReplicaPrecision, Bf16TrainsWithFiniteLossesAndABetterScore) {
  Config config = parse_config(
      "seed: 3\nlayout: data_parallel\ndata: {dataset: ring, toy_samples: 2000}\n"
      "network: {kind: toy, latent_dim: 8, toy_hidden: 64}\ngrid: {rows: 1, cols: 1}\n"
      "training: {batch_size: 64, learning_rate: 2.0e-3, precision: bf16}\n",
      "bf16.yaml");
  constexpr int kWorkers = 2;
  constexpr std::int64_t kSteps = 1000;  // the score first worsens, in fp32 too, then falls below half
  std::vector<Bytes> pairs(kWorkers);
  std::vector<double> before(kWorkers), after(kWorkers);
  ReplicaTally tally;
  test::on_worker_threads(kWorkers, [&](int r, WorkerExchange& exchange) {
    const TrainingData data(config);
    const std::unique_ptr<ReplicaTrainer> trainer = test::make_replica(config, data, r, kWorkers);
    auto reduce = make_gradient_allreduce(config.data_parallel.allreduce, config.data_parallel.compression, exchange);
    const auto score = [&] {
      torch::NoGradGuard no_grad;
      const torch::Tensor samples = trainer->sample(1000, at::detail::createCPUGenerator(11));
      return make_scorer(config)->report(samples).at("frechet_2d");
    };
    before[static_cast<std::size_t>(r)] = score();
    for (std::int64_t s = 0; s < kSteps; ++s) ASSERT_FALSE(trainer->step(s, *reduce).has_value());
    after[static_cast<std::size_t>(r)] = score();
    if (r == 0) tally = trainer->take_tally();
    pairs[static_cast<std::size_t>(r)] = trainer->encode();
    for (StackedMembers* net :
         {static_cast<StackedMembers*>(&trainer->generator()), static_cast<StackedMembers*>(&trainer->discriminator())})
      for (const torch::Tensor& p : net->optimizer().params()) EXPECT_EQ(p.scalar_type(), torch::kFloat32);
  });
  EXPECT_TRUE(pairs[0] == pairs[1]) << "the bf16 replicas differ";
  EXPECT_TRUE(std::isfinite(tally.generator_loss) && std::isfinite(tally.discriminator_loss));
  EXPECT_LT(after[0], 0.5 * before[0]) << "frechet_2d " << before[0] << " before, " << after[0] << " after";
}

}  // namespace
}  // namespace cellgan
