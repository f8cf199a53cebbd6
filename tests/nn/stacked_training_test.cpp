// Training stacked networks: one GAN step of a stack equals the same
// members stepped alone, with their own learning rates and Adam ages; a
// member does not depend on its stack; a row mask leaves members alone;
// BatchedAdam is torch::optim::Adam per member.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/nn/batched_adam.h"
#include "common/nn/discriminator_step.h"
#include "common/nn/precision.h"
#include "common/nn/stacked_networks.h"
#include "common/nn/stacked_penalties.h"
#include "tests/nn/stacked_members.h"

namespace cellgan {
namespace {

using test::aged_individual;
using test::same_bits;

struct Pair {
  Individual g;
  Individual d;
};

// Member p: its own weights, learning rates and Adam ages (D and G differ).
Pair member(const NetworkShape& shape, int p) {
  Pair pair{aged_individual(Role::kGenerator, shape, 1e-4 * (p + 1), p % 3, 100 + p),
            aged_individual(Role::kDiscriminator, shape, 3e-4 / (p + 1), (p + 1) % 3 * 2, 200 + p)};
  return pair;
}

struct Stacks {
  StackedGenerator g;
  StackedDiscriminator d;
};

Stacks stacks_of(const NetworkShape& shape, const std::vector<Pair>& pairs) {
  const auto n = static_cast<std::int64_t>(pairs.size());
  Stacks s{StackedGenerator(shape, n, 2e-4, {}, LossKind::kBce), StackedDiscriminator(shape, n, 2e-4, {}, LossKind::kBce)};
  for (std::int64_t p = 0; p < n; ++p) {
    s.g.load_row(p, pairs[p].g);
    s.d.load_row(p, pairs[p].d);
  }
  return s;
}

void expect_step_equals_members_alone(const NetworkShape& shape, BceForm form, std::int64_t batch) {
  std::vector<Pair> pairs;
  for (int p = 0; p < 3; ++p) pairs.push_back(member(shape, p));
  Stacks stacks = stacks_of(shape, pairs);
  for (int round = 0; round < 2; ++round) {
    const test::StepInputs in = test::step_inputs(shape, 3, batch, 7 + round);
    const test::StepLosses stacked = test::step_stacked(stacks.g, stacks.d, in, form);
    test::StepLosses alone;
    for (int p = 0; p < 3; ++p) test::step_alone(pairs[p].g, pairs[p].d, in, p, form, alone);
    for (int p = 0; p < 3; ++p) {
      EXPECT_EQ(test::bytes_difference(stacks.d.row_bytes(p), pairs[p].d.encode()), "")
          << "D of member " << p << ", round " << round;
      EXPECT_EQ(test::bytes_difference(stacks.g.row_bytes(p), pairs[p].g.encode()), "")
          << "G of member " << p << ", round " << round;
      EXPECT_EQ(stacked.d[p], alone.d[p]) << "D loss of member " << p;
      EXPECT_EQ(stacked.g[p], alone.g[p]) << "G loss of member " << p;
    }
  }
}

TEST(StackedTraining, MlpStepEqualsTheMembersSteppedAloneToTheBit) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  for (const std::int64_t batch : {64, 112}) expect_step_equals_members_alone(test::mnist_mlp_shape(), BceForm::kPyTorch, batch);
}

// Bit for bit holds where the batch is a multiple of 16 (64, 96 and 112
// measured), not at 100 or 104: there some batched kernel rounds a few
// values other than its single-network counterpart, in the last bit (a
// member's result still does not depend on the rest of its stack at 100:
// AMembersResultDoesNotDependOnItsStack). Adam turns those differences
// into a difference of its update, which is at most about lr (3e-4 here)
// per step, so after two steps every weight is within 2 units in the last
// place of the member's own plus 1e-4 of the largest lr (3e-8), and every
// Adam moment within 1e-4 of its tensor's largest magnitude (cancellation
// near 0 makes a moment's relative difference large where the moment is
// negligible). Measured: at most 1.5e-8.
TEST(StackedTraining, StepAtTheTrainingBatchSizeIsTheMembersAloneToTheLastBit) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  const NetworkShape shape = test::mnist_mlp_shape();
  std::vector<Pair> pairs;
  for (int p = 0; p < 3; ++p) pairs.push_back(member(shape, p));
  Stacks stacks = stacks_of(shape, pairs);
  for (int round = 0; round < 2; ++round) {
    const test::StepInputs in = test::step_inputs(shape, 3, 100, 7 + round);
    test::step_stacked(stacks.g, stacks.d, in, BceForm::kPyTorch);
    test::StepLosses alone;
    for (int p = 0; p < 3; ++p) test::step_alone(pairs[p].g, pairs[p].d, in, p, BceForm::kPyTorch, alone);
  }
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(test::beyond_tolerance(stacks.d.row_bytes(p), pairs[p].d.encode(), 2, 3e-8, 1e-4), "") << "D " << p;
    EXPECT_EQ(test::beyond_tolerance(stacks.g.row_bytes(p), pairs[p].g.encode(), 2, 3e-8, 1e-4), "") << "G " << p;
  }
}

TEST(StackedTraining, ClampedBceStepEqualsTheMembersSteppedAlone) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  expect_step_equals_members_alone(test::mnist_mlp_shape(), BceForm::kClamped, 64);
}

TEST(StackedTraining, ToyStepEqualsTheMembersSteppedAlone) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  expect_step_equals_members_alone(test::wide_toy_shape(), BceForm::kPyTorch, 64);
}

TEST(StackedTraining, AMembersResultDoesNotDependOnItsStack) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  const NetworkShape shape = test::mnist_mlp_shape();
  std::vector<Pair> five;
  for (int p = 0; p < 5; ++p) five.push_back(member(shape, p));
  std::vector<Pair> one;
  one.push_back(member(shape, 2));
  Stacks big = stacks_of(shape, five);
  Stacks small = stacks_of(shape, one);
  for (int round = 0; round < 3; ++round) {
    // The training batch size, and one that is a multiple of 16.
    const test::StepInputs in = test::step_inputs(shape, 5, round == 1 ? 64 : 100, 30 + round);
    test::step_stacked(big.g, big.d, in, BceForm::kPyTorch);
    const test::StepInputs mine{in.real.narrow(0, 2, 1), in.z_fake.narrow(0, 2, 1), in.z_step.narrow(0, 2, 1)};
    test::step_stacked(small.g, small.d, mine, BceForm::kPyTorch);
  }
  EXPECT_EQ(test::bytes_difference(big.g.row_bytes(2), small.g.row_bytes(0)), "");
  EXPECT_EQ(test::bytes_difference(big.d.row_bytes(2), small.d.row_bytes(0)), "");
}

// An R1 penalty needs the gradient of D's input gradient (a double
// backward through StackedLinear's backward): each member's parameter
// gradients are those of discriminator_step_loss on its own. Not to the
// bit: the double backward's reductions and products run over other
// shapes than a member's alone and round differently in the last bit
// (measured: at most 4e-9, against gradients of about 1e-2); each tensor
// within 1e-5 of its largest gradient.
TEST(StackedTraining, R1PenaltyGradientsEqualTheMembersAlone) {
  const NetworkShape shape = test::mnist_mlp_shape();
  constexpr double kGamma = 10.0;
  std::vector<Individual> alone;
  for (int p = 0; p < 3; ++p) alone.push_back(aged_individual(Role::kDiscriminator, shape, 2e-4, p, 300 + p));
  StackedDiscriminator stack(shape, 3, 2e-4, {}, LossKind::kBce);
  for (int p = 0; p < 3; ++p) stack.load_row(p, alone[p]);
  const test::StepInputs in = test::step_inputs(shape, 3, 64, 21);
  const torch::Tensor fake = torch::tanh(in.real * 1.5);
  stack.optimizer().zero_grad();
  const torch::Tensor real = in.real.detach().requires_grad_(true);
  const torch::Tensor d_real = stack.forward(real);
  const torch::Tensor input_grad =
      torch::autograd::grad({d_real.sum()}, {real}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  const torch::Tensor r1 = (kGamma / 2.0) * input_grad.square().sum(2).mean(1);
  const MemberLosses bce = stacked_discriminator_loss(LossKind::kBce, d_real, stack.forward(fake), BceForm::kPyTorch);
  (bce.per_member + r1).sum().backward();
  const std::vector<StackedTensor> rows = stack.network()->parameter_tensors();
  for (int p = 0; p < 3; ++p) {
    alone[p].optimizer().zero_grad();
    const DiscriminatorPenalties penalties{kGamma, 10.0, BceForm::kPyTorch};
    discriminator_step_loss(alone[p].discriminator(), LossKind::kBce, in.real[p], fake[p], penalties).backward();
    const auto params = alone[p].module().parameters();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const torch::Tensor stacked_grad = member_row(rows[i], rows[i].stacked.grad(), p);
      const torch::Tensor& own = params[i].grad();
      const double difference = (stacked_grad - own).abs().max().item<double>();
      EXPECT_LE(difference, 1e-5 * own.abs().max().item<double>()) << "member " << p << ", parameter " << i;
    }
  }
}

// fp16's loss scales (powers of two) taken into R1's input gradient and
// out again change no bit in fp32: only what would underflow in 16 bits.
TEST(StackedTraining, R1WithLossScalesIsTheSameBits) {
  const NetworkShape shape = test::mnist_mlp_shape();
  StackedDiscriminator stack(shape, 3, 2e-4, {}, LossKind::kBce);
  const test::StepInputs in = test::step_inputs(shape, 3, 64, 25);
  const auto r1 = [&](const torch::Tensor& scales) {
    stack.optimizer().zero_grad();
    const torch::Tensor real = in.real.detach().requires_grad_(true);
    const torch::Tensor penalty = stacked_r1_penalty(stack.forward(real), real, 10.0, scales);
    penalty.sum().backward();
    std::vector<torch::Tensor> out{penalty.detach()};
    for (const StackedTensor& t : stack.network()->parameter_tensors()) out.push_back(t.stacked.grad().clone());
    return out;
  };
  const std::vector<torch::Tensor> plain = r1(torch::Tensor());
  const std::vector<torch::Tensor> scaled = r1(torch::tensor({65536.0f, 1024.0f, 1.0f}));
  ASSERT_GT(plain[0].abs().max().item<double>(), 0.0);
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(torch::equal(plain[i], scaled[i])) << "tensor " << i;
}

// Under bf16 autocast the R1 penalty still reaches every weight through the
// double backward (the casts to 16 bits are part of the graph): each
// parameter's gradient is fp32's to bf16's rounding (8 bits of mantissa),
// within 5% of its own largest entry. The biases' R1 gradients are near
// zero (a leaky ReLU's slope does not depend on its input almost
// everywhere; the last bias does not enter the input gradient at all), so
// theirs is held to the network's scale: 5% of 2% of its largest gradient.
// Measured: the weights within 2.3% of their own largest; without the
// casts in the graph, 100%.
TEST(StackedTraining, R1PenaltyGradientsUnderBf16AreFp32sToItsRounding) {
  const NetworkShape shape = test::mnist_mlp_shape();
  torch::manual_seed(22);  // the weights: Torch's global generator starts from a random seed
  StackedDiscriminator stack(shape, 2, 2e-4, {}, LossKind::kBce);
  const test::StepInputs in = test::step_inputs(shape, 2, 64, 23);
  const auto r1_gradients = [&](Precision precision) {
    stack.optimizer().zero_grad();
    const torch::Tensor real = in.real.detach().requires_grad_(true);
    torch::Tensor d_real;
    {
      const AutocastScope autocast(precision, torch::kCPU);
      d_real = stack.forward(real).to(torch::kFloat32);
    }
    const torch::Tensor input_grad =
        torch::autograd::grad({d_real.sum()}, {real}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
    input_grad.square().sum().backward();
    std::vector<torch::Tensor> grads;
    for (const StackedTensor& t : stack.network()->parameter_tensors())
      grads.push_back(t.stacked.grad().defined() ? t.stacked.grad().clone() : torch::zeros_like(t.stacked));
    return grads;
  };
  const std::vector<torch::Tensor> fp32 = r1_gradients(Precision::kFp32);
  const std::vector<torch::Tensor> bf16 = r1_gradients(Precision::kBf16);
  double largest = 0.0;
  for (const torch::Tensor& g : fp32) largest = std::max(largest, g.abs().max().item<double>());
  ASSERT_GT(largest, 0.0);
  for (std::size_t i = 0; i < fp32.size(); ++i) {
    const double own = fp32[i].abs().max().item<double>();
    EXPECT_LE((bf16[i] - fp32[i]).abs().max().item<double>(), 0.05 * std::max(own, 0.02 * largest))
        << "parameter " << i;
  }
}

// A discriminator's probability is the sigmoid of its logit in fp32, also
// under bf16 autocast, stacked and alone: in 16 bits sigmoid(7) would round
// to 1 and a fake that D takes for real would give BCE no gradient.
TEST(StackedTraining, UnderBf16TheDiscriminatorsSigmoidRunsInFp32) {
  const NetworkShape shape = test::mnist_mlp_shape();
  StackedDiscriminator stack(shape, 1, 2e-4, {}, LossKind::kBce);
  Individual alone(Role::kDiscriminator, shape, 2e-4, {}, LossKind::kBce);
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> stacked_params;
  for (const StackedTensor& t : stack.network()->parameter_tensors()) stacked_params.push_back(t.stacked);
  for (std::vector<torch::Tensor> params : {stacked_params, alone.module().parameters()}) {
    params[params.size() - 2].zero_();   // the last layer's weight: the logit is its bias, 7
    params[params.size() - 1].fill_(7.0);
  }
  const torch::Tensor x = torch::rand({4, 784});
  const AutocastScope autocast(Precision::kBf16, torch::kCPU);
  const float expected = 1.0f / (1.0f + std::exp(-7.0f));
  for (const torch::Tensor& d : {stack.forward(x.unsqueeze(0)).reshape({-1}), alone.discriminator()->forward(x).reshape({-1})}) {
    EXPECT_EQ(d.scalar_type(), torch::kFloat32);
    EXPECT_NEAR(d[0].item<float>(), expected, 1e-6);
  }
}

TEST(StackedTraining, RowMaskLeavesMaskedMembersUnchangedBitForBit) {
  const NetworkShape shape = test::mnist_mlp_shape();
  std::vector<Pair> pairs;
  for (int p = 0; p < 3; ++p) pairs.push_back(member(shape, p));
  Stacks masked = stacks_of(shape, pairs);
  Stacks all = stacks_of(shape, pairs);
  const torch::Tensor mask = torch::tensor({true, false, true});
  const test::StepInputs in = test::step_inputs(shape, 3, 64, 11);
  test::step_stacked(masked.g, masked.d, in, BceForm::kPyTorch, mask);
  test::step_stacked(all.g, all.d, in, BceForm::kPyTorch);
  // Member 1 is as it was: weights, moments, step count.
  EXPECT_EQ(masked.g.row_bytes(1), pairs[1].g.encode());
  EXPECT_EQ(masked.d.row_bytes(1), pairs[1].d.encode());
  // The others stepped exactly as without a mask.
  for (const int p : {0, 2}) {
    EXPECT_EQ(masked.g.row_bytes(p), all.g.row_bytes(p)) << "member " << p;
    EXPECT_EQ(masked.d.row_bytes(p), all.d.row_bytes(p)) << "member " << p;
    EXPECT_NE(masked.g.row_bytes(p), pairs[p].g.encode()) << "member " << p;
  }
}

// BatchedAdam on plain stacked tensors against torch::optim::Adam per
// member, with 9 members (the vectorised pow of the bias corrections) of
// different learning rates and ages, and a mask on one step.
TEST(BatchedAdam, EqualsTorchAdamPerMember) {
  constexpr int kMembers = 9;
  torch::manual_seed(4);
  const torch::Tensor start = torch::randn({kMembers, 7, 5});
  std::vector<torch::Tensor> alone;
  std::vector<std::unique_ptr<torch::optim::Adam>> adams;
  torch::Tensor stacked = start.clone().requires_grad_(true);
  BatchedAdam batched({stacked}, 1e-3, BatchedAdamOptions{0.5, 0.999});
  for (int p = 0; p < kMembers; ++p) {
    alone.push_back(start[p].clone().requires_grad_(true));
    const double lr = 1e-3 * (1 + p % 4);
    adams.push_back(std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{alone.back()},
                                                         torch::optim::AdamOptions(lr).betas({0.5, 0.999})));
    batched.set_learning_rate(p, lr);
  }
  // Ages: member p takes p steps alone before they all step together.
  for (int round = 0; round < kMembers + 3; ++round) {
    const torch::Tensor grads = torch::randn({kMembers, 7, 5});
    std::vector<bool> stepping(kMembers);
    for (int p = 0; p < kMembers; ++p) stepping[p] = round >= kMembers - p && !(round == kMembers + 1 && p == 4);
    torch::Tensor mask = torch::zeros({kMembers}, torch::kBool);
    for (int p = 0; p < kMembers; ++p) {
      if (!stepping[p]) continue;
      mask[p] = true;
      alone[p].mutable_grad() = grads[p].clone();
      adams[p]->step();
    }
    stacked.mutable_grad() = grads.clone();
    batched.step(mask);
  }
  for (int p = 0; p < kMembers; ++p) {
    EXPECT_TRUE(same_bits(stacked[p], alone[p])) << "member " << p;
    const auto& state = static_cast<const torch::optim::AdamParamState&>(*adams[p]->state().begin()->second);
    EXPECT_EQ(batched.steps()[p].item<std::int64_t>(), state.step()) << "member " << p;
    EXPECT_TRUE(same_bits(batched.exp_avg()[0][p], state.exp_avg())) << "member " << p;
    EXPECT_TRUE(same_bits(batched.exp_avg_sq()[0][p], state.exp_avg_sq())) << "member " << p;
  }
}

TEST(BatchedAdam, StepWithoutMaskEqualsAnAllTrueMask) {
  torch::manual_seed(6);
  const torch::Tensor start = torch::randn({3, 4, 6});
  torch::Tensor a = start.clone().requires_grad_(true);
  torch::Tensor b = start.clone().requires_grad_(true);
  BatchedAdam adam_a({a}, 2e-3);
  BatchedAdam adam_b({b}, 2e-3);
  for (int s = 0; s < 3; ++s) {
    const torch::Tensor g = torch::randn({3, 4, 6});
    a.mutable_grad() = g.clone();
    b.mutable_grad() = g.clone();
    adam_a.step();
    adam_b.step(torch::ones({3}, torch::kBool));
  }
  EXPECT_TRUE(same_bits(a, b));
  EXPECT_TRUE(same_bits(adam_a.exp_avg_sq()[0], adam_b.exp_avg_sq()[0]));
}

TEST(BatchedAdam, RefusesBadParametersAndMasks) {
  EXPECT_THROW(BatchedAdam({}, 1e-3), std::invalid_argument);
  EXPECT_THROW(BatchedAdam({torch::zeros({2, 3})}, 1e-3), std::invalid_argument);  // no grad
  BatchedAdam adam({torch::zeros({2, 3}).requires_grad_(true)}, 1e-3);
  EXPECT_THROW(adam.step(torch::ones({3}, torch::kBool)), std::invalid_argument);
  EXPECT_THROW(adam.step(torch::ones({2})), std::invalid_argument);
  EXPECT_THROW(adam.set_learning_rate(2, 1e-3), std::out_of_range);
}

}  // namespace
}  // namespace cellgan
