// ZeRO stage 1 (sharded_adam.h) through the data-parallel replicas
// (replica_trainer.h), on W threads over the in-process communicator:
// sharded replicas equal unsharded ones to the bit with the ring, step
// after step, for odd W and small fusion buffers; the gathered state is the
// unsharded pair's, byte for byte; a sharded checkpoint resumes with
// another W, sharded or not; clipping stays within float rounding; each
// worker keeps about 1/W of Adam's moments.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "common/config.h"
#include "common/nn/training_data.h"
#include "tests/worker/worker_threads.h"
#include "worker/gradient_allreduce.h"
#include "worker/replica_trainer.h"

namespace cellgan {
namespace {

Config toy_config(bool sharded, std::int64_t fusion_bytes = 64LL << 20) {
  Config c = parse_config(
      "seed: 5\nlayout: data_parallel\ndata: {dataset: ring, toy_samples: 500}\n"
      "network: {kind: toy, latent_dim: 4, toy_hidden: 16}\ngrid: {rows: 1, cols: 1}\n"
      "training: {batch_size: 15, learning_rate: 1.0e-3}\n",
      "toy.yaml");
  c.data_parallel.shard_optimizer = sharded;
  c.data_parallel.fusion_bytes = fusion_bytes;
  return c;
}

struct Trained {
  std::vector<Bytes> weights;  // worker 0's pair without Adam state, after each step
  Bytes state;                 // worker 0's pair with Adam state after the last step (gathered when sharded)
  std::vector<std::int64_t> adam_bytes;  // each worker's Adam moments after the last step
  bool replicas_agree = true;
};

Bytes weights_of(ReplicaTrainer& t) {
  Bytes out = t.generator().row_bytes(0, false);
  const Bytes d = t.discriminator().row_bytes(0, false);
  out.insert(out.end(), d.begin(), d.end());
  return out;
}

// Steps [from, to) on `workers` threads, from `start` (a pair's bytes) when given.
Trained train(const Config& config, int workers, std::int64_t from, std::int64_t to,
              const std::optional<Bytes>& start = {}) {
  Trained run;
  std::vector<Bytes> last(static_cast<std::size_t>(workers));
  run.adam_bytes.resize(static_cast<std::size_t>(workers));
  test::on_worker_threads(workers, [&](int r, WorkerExchange& exchange) {
    const TrainingData data(config);
    const std::unique_ptr<ReplicaTrainer> trainer = test::make_replica(config, data, r, workers);
    if (start) trainer->decode(*start, "start");
    auto reduce = make_gradient_allreduce(config.data_parallel.allreduce, config.data_parallel.compression, exchange);
    for (std::int64_t s = from; s < to; ++s) {
      EXPECT_FALSE(trainer->step(s, *reduce).has_value()) << "worker " << r << ", step " << s;
      if (r == 0) run.weights.push_back(weights_of(*trainer));
    }
    last[static_cast<std::size_t>(r)] = weights_of(*trainer);
    run.adam_bytes[static_cast<std::size_t>(r)] = trainer->optimizer_state_bytes();
    if (trainer->sharded()) {
      EXPECT_FALSE(trainer->gather_optimizer(exchange).has_value()) << "worker " << r;
    }
    if (r == 0) run.state = trainer->encode();
  });
  for (const Bytes& b : last) run.replicas_agree = run.replicas_agree && b == last[0];
  return run;
}

TEST(ShardedAdam, ShardedReplicasEqualUnshardedOnesToTheBitAfterEveryStep) {
  for (int w : {2, 3})
    for (std::int64_t fusion : {std::int64_t{64} << 20, std::int64_t{256}}) {
      SCOPED_TRACE(fmt::format("W {}, fusion_bytes {}", w, fusion));
      const Trained plain = train(toy_config(false, fusion), w, 0, 4);
      const Trained sharded = train(toy_config(true, fusion), w, 0, 4);
      EXPECT_TRUE(sharded.replicas_agree);
      ASSERT_EQ(plain.weights.size(), sharded.weights.size());
      for (std::size_t s = 0; s < plain.weights.size(); ++s)
        EXPECT_TRUE(plain.weights[s] == sharded.weights[s]) << "after step " << s;
      EXPECT_FALSE(plain.weights.front() == plain.weights.back()) << "nothing trained";
      EXPECT_TRUE(plain.state == sharded.state) << "the gathered pair differs from the unsharded one";
    }
}

TEST(ShardedAdam, ASharedCheckpointResumesWithAnotherWorkerCountShardedOrNot) {
  const Trained first = train(toy_config(true), 3, 0, 2);  // gathered from three shards
  const Trained sharded = train(toy_config(true), 2, 2, 4, first.state);
  const Trained plain = train(toy_config(false), 2, 2, 4, first.state);
  const Trained reference = train(toy_config(false), 3, 0, 2);
  EXPECT_TRUE(first.state == reference.state);
  ASSERT_EQ(sharded.weights.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) EXPECT_TRUE(sharded.weights[s] == plain.weights[s]) << "after step " << s + 2;
  EXPECT_TRUE(sharded.state == plain.state);
}

// The parameters of a pair's bytes.
std::vector<torch::Tensor> parameters_of(const Config& config, const Bytes& pair) {
  const TrainingData data(config);
  ReplicaTrainer t(config, data, 0, 1);
  t.decode(pair, "pair");
  std::vector<torch::Tensor> out;
  for (StackedMembers* n : {static_cast<StackedMembers*>(&t.generator()), static_cast<StackedMembers*>(&t.discriminator())})
    for (const torch::Tensor& p : n->optimizer().params()) out.push_back(p.detach().clone());
  return out;
}

double largest_difference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double most = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) most = std::max(most, (a[i] - b[i]).abs().max().item<double>());
  return most;
}

// Clipping: the squares are summed per shard, then over the workers, so the
// factor may differ from clip_grad_norm_'s in its last bits. The sharded
// weights stay far closer to the clipped unsharded ones than those are to
// unclipped training.
TEST(ShardedAdam, ClippedShardsStayWithinRoundingOfClipGradNorm) {
  Config plain_config = toy_config(false);
  plain_config.data_parallel.clip_grad_norm = 0.01;  // small enough to clip every step
  Config sharded_config = plain_config;
  sharded_config.data_parallel.shard_optimizer = true;
  const Trained plain = train(plain_config, 3, 0, 4);
  const Trained sharded = train(sharded_config, 3, 0, 4);
  const Trained unclipped = train(toy_config(false), 3, 0, 4);
  EXPECT_TRUE(sharded.replicas_agree);
  const auto p = parameters_of(plain_config, plain.state);
  const double rounding = largest_difference(p, parameters_of(plain_config, sharded.state));
  const double clipping = largest_difference(p, parameters_of(plain_config, unclipped.state));
  EXPECT_GT(clipping, 0.0) << "the clip never bit";
  EXPECT_LT(rounding, clipping / 100) << "sharded " << rounding << " from clipped, unclipped " << clipping;
}

TEST(ShardedAdam, EachWorkerKeepsAboutOneWthOfTheMoments) {
  const Trained plain = train(toy_config(false), 3, 0, 1);
  const Trained sharded = train(toy_config(true), 3, 0, 1);
  std::int64_t total = 0;
  for (std::int64_t b : sharded.adam_bytes) {
    EXPECT_LE(b, plain.adam_bytes[0] / 3 + 64) << "a worker keeps more than its third";
    total += b;
  }
  EXPECT_EQ(total, plain.adam_bytes[0]) << "the shards do not add up to the whole state";
}

}  // namespace
}  // namespace cellgan
