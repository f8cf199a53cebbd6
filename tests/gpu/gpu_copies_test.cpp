// cellgan on a GPU, the copies (CTest label `gpu`; each test skips when
// LibTorch sees no GPU): an individual made to be written there (decode,
// clone, snapshot, a stack's rows) gets empty storage on the device and is
// then written whole, so it encodes as its source; are_finite() judges
// on the device (its tensors put together first) as it does on the CPU; and
// a stack's Adam on the device steps in one buffer, as tensor by tensor;
// a stack of generators samples there as each one alone; and a member's
// mean in fixed order there does not depend on its stack.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <vector>

#include "common/nn/batched_adam.h"
#include "common/nn/device.h"
#include "common/nn/ensemble.h"
#include "common/nn/individual.h"
#include "common/nn/member_draws.h"
#include "common/nn/stacked_networks.h"
#include "common/nn/stacked_sampling.h"
#include "common/nn/stacked_tensor.h"

namespace cellgan {
namespace {

#define SKIP_WITHOUT_GPU()                                         \
  do {                                                             \
    if (visible_gpus() == 0) GTEST_SKIP() << "no GPU is visible"; \
  } while (0)

torch::Device gpu() { return resolve_device("cuda:0", 0); }

NetworkShape image_shape(NetworkKind kind) {
  NetworkShape shape;
  shape.kind = kind;
  shape.latent_dim = 16;
  shape.data_dim = 784;
  return shape;
}

// An individual made on the CPU with one Adam step, so that it has moments.
Individual stepped(Role role, const NetworkShape& shape, std::uint64_t seed) {
  torch::manual_seed(seed);
  Individual ind(role, shape, 2e-4, {}, LossKind::kBce);
  ind.module().train();
  const torch::Tensor out = role == Role::kGenerator ? ind.generator()->forward(torch::randn({4, shape.latent_dim}))
                                                     : ind.discriminator()->forward(torch::rand({4, shape.data_dim}));
  out.pow(2).sum().backward();
  ind.optimizer().step();
  return ind;
}

TEST(GpuCopies, CopiesMadeOnTheDeviceEncodeAsTheirSources) {
  SKIP_WITHOUT_GPU();
  for (const NetworkKind kind : {NetworkKind::kMlp, NetworkKind::kDcgan, NetworkKind::kSngan}) {
    const NetworkShape shape = image_shape(kind);
    for (const Role role : {Role::kGenerator, Role::kDiscriminator}) {
      const Individual source = stepped(role, shape, 3);
      const std::vector<std::uint8_t> bytes = source.encode();
      const Individual on = Individual::decode(bytes, shape, {}, true, gpu());
      EXPECT_EQ(on.device(), gpu());
      EXPECT_EQ(on.encode(), bytes) << to_string(kind);
      EXPECT_EQ(on.clone().encode(), bytes) << to_string(kind);
      EXPECT_EQ(on.snapshot().encode(), bytes) << to_string(kind);
      EXPECT_EQ(on.clone_weights().encode(), Individual::decode(source.encode(false), shape, {}).encode())
          << to_string(kind);
      // A stack made undrawn on the device, every row loaded, gives its rows back as they went in.
      const Individual other = Individual::decode(stepped(role, shape, 4).encode(), shape, {}, true, gpu());
      std::unique_ptr<StackedMembers> stack;
      if (role == Role::kGenerator)
        stack = std::make_unique<StackedGenerator>(shape, 2, 2e-4, AdamSettings{}, LossKind::kBce, gpu(),
                                                   InitialWeights::kUndrawn);
      else
        stack = std::make_unique<StackedDiscriminator>(shape, 2, 2e-4, AdamSettings{}, LossKind::kBce, gpu(),
                                                       InitialWeights::kUndrawn);
      stack->load_row(0, on);
      stack->load_row(1, other);
      const std::vector<Individual> rows = stack->to_individuals();
      EXPECT_EQ(rows[0].encode(), bytes) << to_string(kind);
      EXPECT_EQ(rows[1].encode(), other.encode()) << to_string(kind);
      stack->load_row(1, bytes);  // from the bytes too, through pinned memory
      EXPECT_EQ(stack->row_bytes(1), bytes) << to_string(kind);
      EXPECT_EQ(stack->row_bytes(0), bytes) << to_string(kind);
    }
  }
}

TEST(GpuCopies, AreFiniteOnTheDeviceJudgesAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const NetworkShape shape = image_shape(NetworkKind::kMlp);
  std::vector<Individual> cpu;
  for (int i = 0; i < 4; ++i) cpu.push_back(stepped(Role::kDiscriminator, shape, 10 + i));
  {
    torch::NoGradGuard no_grad;
    cpu[1].module().parameters()[2].view(-1)[5] = std::numeric_limits<float>::quiet_NaN();
    cpu[2].moments(3)->exp_avg.view(-1)[0] = -std::numeric_limits<float>::infinity();
    cpu[3].module().parameters()[0].fill_(3e38F);  // finite, though their sum overflows
  }
  std::vector<Individual> on;
  for (const Individual& i : cpu) on.push_back(Individual::decode(i.encode(), shape, {}, true, gpu()));
  std::vector<const Individual*> cpu_all, on_all;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    cpu_all.push_back(&cpu[i]);
    on_all.push_back(&on[i]);
  }
  const std::vector<bool> expected{true, false, false, true};
  EXPECT_EQ(Individual::are_finite(cpu_all), expected);
  EXPECT_EQ(Individual::are_finite(on_all), expected);
  // Individuals of other sizes among them (reduced by size, grouped_reduction.h): a generator, one
  // with a NaN, and a discriminator without its Adam state; each judged as alone.
  std::vector<Individual> more;
  more.push_back(stepped(Role::kGenerator, shape, 20));
  more.push_back(stepped(Role::kGenerator, shape, 21));
  {
    torch::NoGradGuard no_grad;
    more[1].module().parameters()[1].view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
  }
  more.push_back(cpu[0].clone_weights());
  std::vector<Individual> more_on;
  for (const Individual& i : more)
    more_on.push_back(Individual::decode(i.encode(), shape, {}, true, gpu()));
  std::vector<const Individual*> mixed{on_all[0], &more_on[0], on_all[1], &more_on[1], &more_on[2], on_all[3]};
  EXPECT_EQ(Individual::are_finite(mixed), (std::vector<bool>{true, true, false, false, true, true}));
}

// On the device a stack's Adam holds its parameters and moments in one
// buffer each, and steps them (plain and masked, members of other rates and
// ages) to the bits of the same steps taken tensor by tensor there.
TEST(GpuCopies, AStacksAdamOnTheDeviceStepsInOneBufferAsTensorByTensor) {
  SKIP_WITHOUT_GPU();
  StackedGenerator stack(image_shape(NetworkKind::kMlp), 3, 2e-4, AdamSettings{}, LossKind::kBce, gpu(),
                         InitialWeights::kUndrawn);
  EXPECT_TRUE(stack.optimizer().in_one_buffer());
  torch::manual_seed(5);
  const std::vector<torch::Tensor> start = {torch::randn({3, 40, 17}), torch::randn({3, 40}), torch::randn({3, 5, 3})};
  std::vector<torch::Tensor> by_tensor, one;
  for (const torch::Tensor& t : start) {
    by_tensor.push_back(t.to(gpu()).requires_grad_(true));
    one.push_back(t.to(gpu()).requires_grad_(true));
  }
  BatchedAdamOptions per_tensor_options, one_buffer_options;
  one_buffer_options.one_buffer = true;
  BatchedAdam adam_by_tensor(by_tensor, 1e-3, per_tensor_options);
  BatchedAdam adam_one(one, 1e-3, one_buffer_options);
  ASSERT_TRUE(adam_one.in_one_buffer());
  for (BatchedAdam* adam : {&adam_by_tensor, &adam_one}) {
    adam->set_learning_rates({1e-3, 4e-3, 2e-4});
    adam->set_steps({0, 7, 2});
  }
  for (int round = 0; round < 5; ++round) {
    for (std::size_t i = 0; i < start.size(); ++i) {
      const torch::Tensor g = torch::randn(start[i].sizes()).to(gpu());
      by_tensor[i].mutable_grad() = g.clone();
      one[i].mutable_grad() = g.clone();
    }
    const torch::Tensor mask = torch::tensor({true, round % 2 == 0, true}).to(gpu());
    adam_by_tensor.step(mask);
    adam_one.step(mask);
  }
  for (std::size_t i = 0; i < start.size(); ++i) {
    EXPECT_TRUE(torch::equal(by_tensor[i].detach().cpu(), one[i].detach().cpu())) << "parameter " << i;
    EXPECT_TRUE(torch::equal(adam_by_tensor.exp_avg_sq()[i].cpu(), adam_one.exp_avg_sq()[i].cpu())) << i;
  }
}

// The mixture's samples on the device (stacked_sampling.h): each
// generator's rows from one stacked pass are those it gives alone, from a
// Philox stream of its own, to float32 rounding.
TEST(GpuCopies, StackedSamplesOnTheDeviceAreEachGeneratorsOwn) {
  SKIP_WITHOUT_GPU();
  for (const NetworkKind kind : {NetworkKind::kMlp, NetworkKind::kDcgan}) {
    std::vector<Individual> gens;
    for (std::uint64_t k = 0; k < 3; ++k)
      gens.push_back(Individual::decode(stepped(Role::kGenerator, image_shape(kind), 50 + k).encode(),
                                        image_shape(kind), {}, true, gpu()));
    const std::vector<std::int64_t> counts = {300, 0, 123};
    std::vector<const Individual*> ptrs;
    std::vector<at::Generator> streams;
    for (std::size_t i = 0; i < gens.size(); ++i) {
      ptrs.push_back(&gens[i]);
      streams.push_back(generator_on(gpu(), 900 + i));
    }
    const std::vector<torch::Tensor> got = sample_each_stacked(ptrs, counts, streams);
    for (std::size_t i = 0; i < gens.size(); ++i) {
      if (counts[i] == 0) {
        EXPECT_FALSE(got[i].defined());
        continue;
      }
      std::vector<Individual*> one{&gens[i]};
      torch::Generator stream = generator_on(gpu(), 900 + i);
      const torch::Tensor want = sample_mixture(one, {1.0}, counts[i], stream);
      EXPECT_TRUE(torch::allclose(got[i].cpu(), want.cpu(), 1e-4, 1e-5)) << to_string(kind) << " generator " << i;
    }
  }
}

// The fitness game's means on a GPU (pair_game.h): a member's has the same
// bits in a stack of 64 as alone, where a CUDA reduction's blocking would
// differ, and is the CPU's to rounding.
TEST(GpuCopies, AMembersMeanInFixedOrderOnTheDeviceDoesNotDependOnItsStack) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(7);
  const torch::Tensor x = torch::randn({64, 1000, 1});
  const torch::Tensor on_gpu = x.to(gpu());
  const torch::Tensor means = fixed_order_member_means(on_gpu);
  ASSERT_TRUE(means.is_cuda());
  for (const std::int64_t p : {0, 31, 63})
    EXPECT_TRUE(torch::equal(fixed_order_member_means(on_gpu.narrow(0, p, 1)).cpu()[0], means.cpu()[p])) << "member " << p;
  EXPECT_TRUE(torch::allclose(means.cpu(), fixed_order_member_means(x), 1e-5, 1e-6));
}

}  // namespace
}  // namespace cellgan
