// Tests of BatchedAdam's one buffer (common/nn/batched_adam.h): the same
// steps as tensor by tensor, to the bit, with the parameters' handles
// (a module's among them) seeing every step.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "common/nn/batched_adam.h"
#include "tests/nn/stacked_members.h"

namespace cellgan {
namespace {

using test::same_bits;

constexpr std::int64_t kMembers = 5;

// Three stacked tensors of different shapes and sizes, as a module's.
struct ThreeTensors : torch::nn::Module {
  explicit ThreeTensors(const torch::Tensor& seed_values) {
    const auto take = [&](std::int64_t from, std::vector<std::int64_t> sizes) {
      std::int64_t n = 1;
      for (const std::int64_t s : sizes) n *= s;
      return seed_values.narrow(0, from, n).view(sizes).clone().requires_grad_(true);
    };
    weight = register_parameter("weight", take(0, {kMembers, 7, 3}));
    bias = register_parameter("bias", take(105, {kMembers, 7}));
    kernel = register_parameter("kernel", take(140, {kMembers, 2, 2, 3}));
  }
  torch::Tensor weight, bias, kernel;
};

torch::Tensor seed_values() {
  torch::manual_seed(11);
  return torch::randn({200});
}

BatchedAdamOptions options(bool one_buffer) {
  BatchedAdamOptions o;
  o.one_buffer = one_buffer;
  return o;
}

// Sets every parameter's gradient from `round`'s draws.
void set_gradients(ThreeTensors& m, int round) {
  torch::manual_seed(100 + round);
  for (torch::Tensor& p : m.parameters()) p.mutable_grad() = torch::randn(p.sizes());
}

// Members of different rates and ages, plain and masked steps.
void train(ThreeTensors& m, BatchedAdam& adam) {
  adam.set_learning_rates({1e-3, 2e-3, 5e-4, 1e-2, 3e-3});
  adam.set_steps({0, 3, 10, 1, 0});
  for (int round = 0; round < 6; ++round) {
    set_gradients(m, round);
    if (round % 3 == 2)
      adam.step(torch::tensor({true, false, true, true, false}));
    else
      adam.step();
  }
}

void expect_same_state(ThreeTensors& a, BatchedAdam& adam_a, ThreeTensors& b, BatchedAdam& adam_b) {
  const auto pa = a.parameters();
  const auto pb = b.parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(same_bits(pa[i], pb[i])) << "parameter " << i;
    EXPECT_TRUE(same_bits(adam_a.exp_avg()[i], adam_b.exp_avg()[i])) << "parameter " << i;
    EXPECT_TRUE(same_bits(adam_a.exp_avg_sq()[i], adam_b.exp_avg_sq()[i])) << "parameter " << i;
  }
  EXPECT_TRUE(torch::equal(adam_a.steps(), adam_b.steps()));
}

TEST(BatchedAdamOneBuffer, StepsAsTensorByTensorToTheBit) {
  ThreeTensors by_tensor(seed_values()), one(seed_values());
  BatchedAdam adam_by_tensor(by_tensor.parameters(), 1e-3, options(false));
  BatchedAdam adam_one(one.parameters(), 1e-3, options(true));
  EXPECT_FALSE(adam_by_tensor.in_one_buffer());
  ASSERT_TRUE(adam_one.in_one_buffer());
  train(by_tensor, adam_by_tensor);
  train(one, adam_one);
  expect_same_state(by_tensor, adam_by_tensor, one, adam_one);
  // And the steps changed something.
  EXPECT_FALSE(same_bits(one.weight, ThreeTensors(seed_values()).weight));
}

TEST(BatchedAdamOneBuffer, TheModulesParametersAreSegmentsOfOneBuffer) {
  ThreeTensors m(seed_values());
  const ThreeTensors before(seed_values());
  BatchedAdam adam(m.parameters(), 1e-3, options(true));
  // The values are kept, and the module's own handles point into one buffer, tensor after tensor, each from
  // a multiple of 64 elements (105 weights, then the bias at 128 and the kernel at 192).
  EXPECT_TRUE(same_bits(m.weight, before.weight));
  EXPECT_TRUE(same_bits(m.kernel, before.kernel));
  EXPECT_TRUE(m.bias.storage().is_alias_of(m.weight.storage()));
  EXPECT_TRUE(m.kernel.storage().is_alias_of(m.weight.storage()));
  EXPECT_EQ(m.weight.storage_offset(), 0);
  EXPECT_EQ(m.bias.storage_offset(), 128);
  EXPECT_EQ(m.kernel.storage_offset(), 192);
  EXPECT_TRUE(m.weight.is_leaf() && m.weight.requires_grad());
  // A step is seen through the module's handles, and by autograd's version check.
  const auto version = m.bias._version();
  set_gradients(m, 0);
  adam.step();
  EXPECT_FALSE(same_bits(m.bias, before.bias));
  EXPECT_GT(m.bias._version(), version);
}

// A parameter without a gradient, or moved off its segment, sends the step
// tensor by tensor: still the same result as tensor by tensor.
TEST(BatchedAdamOneBuffer, FallsBackWhenAGradientIsMissingOrAParameterMoved) {
  ThreeTensors by_tensor(seed_values()), one(seed_values());
  BatchedAdam adam_by_tensor(by_tensor.parameters(), 1e-3, options(false));
  BatchedAdam adam_one(one.parameters(), 1e-3, options(true));
  for (auto [m, adam] : {std::pair{&by_tensor, &adam_by_tensor}, std::pair{&one, &adam_one}}) {
    set_gradients(*m, 0);
    m->bias.mutable_grad() = torch::Tensor();  // left alone, as Adam does
    adam->step();
    m->kernel.set_data(m->kernel.detach().clone());  // off its segment
    set_gradients(*m, 1);
    adam->step();
  }
  expect_same_state(by_tensor, adam_by_tensor, one, adam_one);
  EXPECT_FALSE(same_bits(one.kernel, ThreeTensors(seed_values()).kernel));
}

TEST(BatchedAdamOneBuffer, MomentsDroppedAndPutBackStepAsKept) {
  ThreeTensors kept(seed_values()), dropped(seed_values());
  BatchedAdam adam_kept(kept.parameters(), 1e-3, options(true));
  BatchedAdam adam_dropped(dropped.parameters(), 1e-3, options(true));
  for (auto [m, adam] : {std::pair{&kept, &adam_kept}, std::pair{&dropped, &adam_dropped}}) {
    set_gradients(*m, 0);
    adam->step();
  }
  std::vector<torch::Tensor> exp_avg, exp_avg_sq;
  for (std::size_t i = 0; i < 3; ++i) {
    exp_avg.push_back(adam_dropped.exp_avg()[i].clone());
    exp_avg_sq.push_back(adam_dropped.exp_avg_sq()[i].clone());
  }
  adam_dropped.drop_moments();
  adam_dropped.set_moments(exp_avg, exp_avg_sq);
  for (auto [m, adam] : {std::pair{&kept, &adam_kept}, std::pair{&dropped, &adam_dropped}}) {
    set_gradients(*m, 1);
    adam->step();
  }
  expect_same_state(kept, adam_kept, dropped, adam_dropped);
}

}  // namespace
}  // namespace cellgan
