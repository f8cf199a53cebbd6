// The data-parallel replicas (replica_trainer.h) on W threads over the
// in-process communicator: after every step of a short run the replicas
// are identical to the bit (weights, BatchNorm buffers, Adam state), for
// each all-reduce and for the toy MLPs and the DCGAN pair (dropout and
// BatchNorm); and they do train. A pair of individual networks' bytes
// resumes and is written back byte for byte.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "common/comm/in_process_communicator.h"
#include "common/bytes.h"
#include "common/config.h"
#include "common/idx.h"
#include "common/nn/individual.h"
#include "common/nn/torch_generator_lock.h"
#include "common/nn/training_data.h"
#include "tests/common/test_files.h"
#include "tests/nn/synthetic_images.h"
#include "tests/worker/communicator_exchange.h"
#include "worker/gradient_allreduce.h"
#include "worker/replica_trainer.h"

namespace cellgan {
namespace {

constexpr std::int64_t kSteps = 4;

Config toy_config(AllreduceKind kind) {
  Config c = parse_config(
      "seed: 5\nlayout: data_parallel\ndata: {dataset: ring, toy_samples: 500}\n"
      "network: {kind: toy, latent_dim: 4, toy_hidden: 16}\ngrid: {rows: 1, cols: 1}\n"
      "training: {batch_size: 15, learning_rate: 1.0e-3}\n",
      "toy.yaml");
  c.data_parallel.allreduce = kind;
  return c;
}

// The DCGAN pair on 200 synthetic 28x28 images in `folder`.
Config dcgan_config(const std::string& folder) {
  std::vector<std::uint8_t> labels;
  write_idx_images(folder + "/train-images-idx3-ubyte", test::synthetic_idx_images(200, 3, labels));
  write_idx_labels(folder + "/train-labels-idx1-ubyte", labels);
  return parse_config(fmt::format("seed: 9\nlayout: data_parallel\ndata: {{dataset: idx, path: {}}}\n"
                                  "network: {{kind: dcgan, latent_dim: 8}}\ngrid: {{rows: 1, cols: 1}}\n"
                                  "training: {{batch_size: 6}}\n"
                                  "data_parallel: {{fusion_bytes: 4096, scaling: strong}}\n",
                                  folder),
                      "dcgan.yaml");
}

// Each worker's encoded pair after each step: [worker][step].
std::vector<std::vector<Bytes>> train(const Config& config, int workers) {
  std::vector<std::vector<Bytes>> pairs(static_cast<std::size_t>(workers));
  InProcessNetwork network(workers);
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r, comm = network.communicator(r)] {
      torch::set_num_threads(1);
      test::CommunicatorExchange exchange(*comm);
      const TrainingData data(config);
      std::unique_ptr<ReplicaTrainer> made;
      {
        const auto lock = lock_torch_generator();  // building draws from Torch's generator
        made = std::make_unique<ReplicaTrainer>(config, data, r, workers);
      }
      ReplicaTrainer& trainer = *made;
      auto reduce = make_gradient_allreduce(config.data_parallel.allreduce, config.data_parallel.compression, exchange);
      pairs[static_cast<std::size_t>(r)].push_back(trainer.encode());
      for (std::int64_t s = 0; s < kSteps; ++s) {
        EXPECT_FALSE(trainer.step(s, *reduce).has_value()) << "worker " << r << ", step " << s << ": interrupted";
        pairs[static_cast<std::size_t>(r)].push_back(trainer.encode());
      }
    });
  for (auto& t : threads) t.join();
  return pairs;
}

void expect_identical_replicas(const std::vector<std::vector<Bytes>>& pairs) {
  for (std::size_t r = 1; r < pairs.size(); ++r)
    for (std::size_t s = 0; s < pairs[0].size(); ++s)
      EXPECT_TRUE(pairs[r][s] == pairs[0][s]) << "worker " << r << " differs from worker 0 after step " << s;
  for (std::size_t s = 1; s < pairs[0].size(); ++s)
    EXPECT_FALSE(pairs[0][s] == pairs[0][s - 1]) << "step " << s << " changed nothing";
}

TEST(ReplicaTrainer, ReplicasAreIdenticalAfterEveryStepForEachAllreduce) {
  for (AllreduceKind kind : {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast, AllreduceKind::kMpi})
    for (int w : {2, 3}) {
      SCOPED_TRACE(fmt::format("{}, W {}", to_string(kind), w));
      expect_identical_replicas(train(toy_config(kind), w));
    }
}

TEST(ReplicaTrainer, CompressedAccumulatedAndClippedReplicasStayIdentical) {
  Config c = toy_config(AllreduceKind::kRing);
  c.data_parallel.compression = WireCompression::kFp16;
  c.data_parallel.accumulate_steps = 2;
  c.data_parallel.clip_grad_norm = 0.1;
  c.data_parallel.fusion_bytes = 0;
  expect_identical_replicas(train(c, 3));
}

TEST(ReplicaTrainer, DcganReplicasWithDropoutAndBatchNormAreIdenticalAfterEveryStep) {
  test::TempDir tmp;
  const Config c = dcgan_config(tmp.path().string());
  for (AllreduceKind kind : {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast, AllreduceKind::kMpi}) {
    SCOPED_TRACE(to_string(kind));
    Config k = c;
    k.data_parallel.allreduce = kind;
    expect_identical_replicas(train(k, 2));
  }
}

TEST(ReplicaTrainer, SnganWithTheWganGpCriticStaysIdenticalForEachAllreduce) {
  // The penalty's double backward on each shard, the spectral norm's power
  // iteration, and a generator step on every 2nd batch only.
  test::TempDir tmp;
  Config c = dcgan_config(tmp.path().string());
  c.network.kind = NetworkKind::kSngan;
  c.training.loss = LossKind::kWganGp;
  c.training.n_critic = 2;
  for (AllreduceKind kind : {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast, AllreduceKind::kMpi}) {
    SCOPED_TRACE(to_string(kind));
    Config k = c;
    k.data_parallel.allreduce = kind;
    expect_identical_replicas(train(k, 3));
  }
}

TEST(ReplicaTrainer, TheSameSeedAndWorkerCountGiveTheSameBits) {
  const Config c = toy_config(AllreduceKind::kRing);
  EXPECT_TRUE(train(c, 2)[0].back() == train(c, 2)[0].back());
}

TEST(ReplicaTrainer, ShardsSplitTheGlobalBatch) {
  const Config weak = toy_config(AllreduceKind::kRing);
  const TrainingData data(weak);
  EXPECT_EQ(ReplicaTrainer(weak, data, 0, 3).global_rows(), 45);
  EXPECT_EQ(ReplicaTrainer(weak, data, 2, 3).shard_rows(), 15);
  Config strong = weak;
  strong.data_parallel.scaling = BatchScaling::kStrong;
  EXPECT_EQ(ReplicaTrainer(strong, data, 0, 2).global_rows(), 15);
  EXPECT_EQ(ReplicaTrainer(strong, data, 0, 2).shard_rows() + ReplicaTrainer(strong, data, 1, 2).shard_rows(), 15);
}

// A pair in the Individual byte form, as individual networks trained by
// torch::optim::Adam write it (the checkpoint of a replica of individual
// networks): "CLPR", then the generator's and the discriminator's bytes
// with Adam state after two steps.
Bytes individual_pair(const Config& config) {
  const NetworkShape shape = network_shape(config);
  const AdamSettings adam{config.training.adam_beta1, config.training.adam_beta2};
  torch::manual_seed(17);
  Individual g(Role::kGenerator, shape, 1.0e-3, adam, LossKind::kBce);
  Individual d(Role::kDiscriminator, shape, 2.0e-3, adam, LossKind::kBce);
  for (int s = 0; s < 2; ++s) {
    g.optimizer().zero_grad();
    g.generator()->forward(torch::randn({6, shape.latent_dim})).square().sum().backward();
    g.optimizer().step();
    d.optimizer().zero_grad();
    d.discriminator()->forward(torch::rand({6, shape.data_dim})).sum().backward();
    d.optimizer().step();
  }
  ByteWriter w;
  w.put<std::uint32_t>(0x52504c43);  // "CLPR"
  w.put_bytes(g.encode());
  w.put_bytes(d.encode());
  return w.take();
}

TEST(ReplicaTrainer, APairOfIndividualsResumesAndIsWrittenBackByteForByte) {
  test::TempDir tmp;
  for (const Config& c : {toy_config(AllreduceKind::kRing), dcgan_config(tmp.path().string())}) {
    SCOPED_TRACE(to_string(c.network.kind));
    const Bytes pair = individual_pair(c);
    const TrainingData data(c);
    ReplicaTrainer trainer(c, data, 0, 1);
    trainer.decode(pair, "pair");
    EXPECT_TRUE(trainer.encode() == pair) << "the stacked pair's bytes differ from the individuals'";
    EXPECT_DOUBLE_EQ(trainer.discriminator().learning_rate(0), 2.0e-3);
    InProcessNetwork network(1);
    const auto comm = network.communicator(0);
    test::CommunicatorExchange exchange(*comm);
    auto reduce = make_gradient_allreduce(AllreduceKind::kRing, WireCompression::kNone, exchange);
    ASSERT_FALSE(trainer.step(0, *reduce).has_value());
    EXPECT_FALSE(trainer.encode() == pair) << "the resumed pair did not train";
  }
}

}  // namespace
}  // namespace cellgan
