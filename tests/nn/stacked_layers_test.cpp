// The stacked layers of the convolutional kinds against the torch::nn
// layers they stand for, member by member: a input convolution, batch
// norm, layer norm, spectral norm and dropout. Forward outputs, running
// statistics and the gradients of the inputs and of every parameter row.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <functional>
#include <vector>

#include "common/nn/precision.h"
#include "common/nn/spectral_norm.h"
#include "common/nn/stacked_batch_norm.h"
#include "common/nn/stacked_conv.h"
#include "common/nn/stacked_dropout.h"
#include "common/nn/stacked_layer_norm.h"
#include "common/nn/stacked_spectral_norm.h"
#include "tests/nn/stacked_members.h"

namespace cellgan {
namespace {

using test::same_bits;

constexpr std::int64_t kMembers = 3;

// Largest |a - b| over b's largest magnitude.
double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item<double>();
}

// One input [P, B, C, H, W] and one output gradient per test, seeded.
torch::Tensor leaf(std::vector<std::int64_t> sizes, std::uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randn(sizes).requires_grad_(true);
}

// On the CPU each member's convolution is its own Conv2d's: output and
// gradients of the input, weight and bias to the bit.
TEST(StackedLayers, StackedConvolutionIsEachMembersConv2dToTheBit) {
  for (const Conv2dGeometry g : {Conv2dGeometry{1, 32, 4, 2, 1}, Conv2dGeometry{32, 64, 4, 2, 1},
                                      Conv2dGeometry{128, 64, 3, 1, 1}, Conv2dGeometry{64, 1, 3, 1, 1}}) {
    SCOPED_TRACE(std::to_string(g.in) + " -> " + std::to_string(g.out));
    torch::manual_seed(3);
    StackedConv2d stacked(kMembers, g);
    const std::int64_t side = g.stride == 2 ? 14 : 7;
    const torch::Tensor x = leaf({kMembers, 8, g.in, side, side}, 4);
    const torch::Tensor input = x.detach().requires_grad_(true);
    const torch::Tensor y = stacked->forward(input);
    const torch::Tensor grad_y = torch::randn(y.sizes());
    y.backward(grad_y);
    const torch::Tensor grad_x = input.grad();
    const torch::Tensor y_members = y.detach();
    const torch::Tensor grad_y_members = grad_y;
    for (std::int64_t p = 0; p < kMembers; ++p) {
      torch::nn::Conv2d alone(torch::nn::Conv2dOptions(g.in, g.out, g.kernel).stride(g.stride).padding(g.padding));
      {
        torch::NoGradGuard no_grad;
        alone->weight.copy_(stacked->weight[p]);
        alone->bias.copy_(stacked->bias[p]);
      }
      const torch::Tensor xp = x[p].detach().requires_grad_(true);
      const torch::Tensor yp = alone->forward(xp);
      yp.backward(grad_y_members[p]);
      const std::vector<std::pair<torch::Tensor, torch::Tensor>> compared{
          {y_members[p], yp}, {grad_x[p], xp.grad()}, {stacked->weight.grad()[p], alone->weight.grad()},
          {stacked->bias.grad()[p], alone->bias.grad()}};
      const char* what[] = {"output", "input gradient", "weight gradient", "bias gradient"};
      for (std::size_t i = 0; i < compared.size(); ++i) {
        const auto& [stacked_value, own] = compared[i];
        EXPECT_TRUE(same_bits(stacked_value, own)) << what[i] << " of member " << p;
      }
    }
  }
}

// A member's output and gradients, to the bit, whatever the size of its
// stack (1, 2, 3 and 5 here).
TEST(StackedLayers, AMembersConvolutionDoesNotDependOnItsStack) {
  for (const Conv2dGeometry g : {Conv2dGeometry{1, 32, 4, 2, 1}, Conv2dGeometry{64, 1, 3, 1, 1},
                                      Conv2dGeometry{32, 64, 4, 2, 1}}) {
    SCOPED_TRACE(std::to_string(g.in) + " -> " + std::to_string(g.out));
    torch::manual_seed(15);
    StackedConv2d five(5, g);
    const torch::Tensor x = torch::randn({5, 6, g.in, 14, 14});
    const torch::Tensor grad_y = torch::randn({5, 6, g.out, 14 / g.stride, 14 / g.stride});
    std::vector<torch::Tensor> first;  // member 0's output, input and weight gradients in the stack of one
    for (const std::int64_t members : {1, 2, 3, 5}) {
      StackedConv2d stack(members, g);
      {
        torch::NoGradGuard no_grad;
        stack->weight.copy_(five->weight.narrow(0, 0, members));
        stack->bias.copy_(five->bias.narrow(0, 0, members));
      }
      const torch::Tensor input = x.narrow(0, 0, members).contiguous().requires_grad_(true);
      const torch::Tensor y = stack->forward(input);
      y.backward(grad_y.narrow(0, 0, members).contiguous());
      const std::vector<torch::Tensor> member0{y.detach()[0],
                                               input.grad()[0], stack->weight.grad()[0],
                                               stack->bias.grad()[0]};
      if (first.empty()) first = member0;
      for (std::size_t i = 0; i < first.size(); ++i)
        EXPECT_TRUE(same_bits(member0[i], first[i])) << "value " << i << " in a stack of " << members;
    }
  }
}

TEST(StackedLayers, GroupedLayoutRoundTrips) {
  const torch::Tensor x = torch::arange(2 * 3 * 4 * 5 * 6).view({2, 3, 4, 5, 6});
  const torch::Tensor grouped = to_grouped(x);
  EXPECT_EQ(grouped.sizes(), torch::IntArrayRef({3, 8, 5, 6}));
  EXPECT_TRUE(torch::equal(grouped.narrow(1, 4, 4), x[1]));  // member 1's channels
  EXPECT_TRUE(torch::equal(from_grouped(grouped, 2), x));
  EXPECT_THROW(from_grouped(grouped, 3), std::invalid_argument);
}

// Members with their own weights, biases and running statistics.
void randomise(StackedBatchNorm2d& stacked) {
  torch::NoGradGuard no_grad;
  stacked->weight.uniform_(0.5, 1.5);
  stacked->bias.uniform_(-0.5, 0.5);
  stacked->running_mean.uniform_(-0.2, 0.2);
  stacked->running_var.uniform_(0.5, 2.0);
  stacked->num_batches_tracked.copy_(torch::tensor({0, 3, 7}));
}

// Measured: the per-channel statistics and the normalisation are those of
// the member's own BatchNorm2d to the bit, in training and evaluation,
// and so are all gradients.
TEST(StackedLayers, BatchNormIsEachMembersBatchNorm2dToTheBit) {
  torch::manual_seed(8);
  StackedBatchNorm2d stacked(kMembers, 16);
  randomise(stacked);
  std::vector<torch::nn::BatchNorm2d> alone;
  for (std::int64_t p = 0; p < kMembers; ++p) {
    alone.emplace_back(16);
    torch::NoGradGuard no_grad;
    alone[p]->weight.copy_(stacked->weight[p]);
    alone[p]->bias.copy_(stacked->bias[p]);
    alone[p]->running_mean.copy_(stacked->running_mean[p]);
    alone[p]->running_var.copy_(stacked->running_var[p]);
    alone[p]->num_batches_tracked.copy_(stacked->num_batches_tracked[p]);
  }
  for (const bool training : {true, true, false}) {
    SCOPED_TRACE(training ? "training" : "evaluation");
    stacked->train(training);
    const torch::Tensor x = leaf({kMembers, 10, 16, 7, 7}, training ? 9 : 10);
    const torch::Tensor input = x.detach().requires_grad_(true);
    stacked->weight.mutable_grad() = torch::Tensor();
    const torch::Tensor y = stacked->forward(input);
    const torch::Tensor grad_y = torch::randn(y.sizes());
    y.backward(grad_y);
    for (std::int64_t p = 0; p < kMembers; ++p) {
      alone[p]->train(training);
      alone[p]->weight.mutable_grad() = torch::Tensor();
      const torch::Tensor xp = x[p].detach().requires_grad_(true);
      const torch::Tensor yp = alone[p]->forward(xp);
      yp.backward(grad_y[p]);
      EXPECT_TRUE(same_bits(y.detach()[p], yp)) << "output of member " << p;
      EXPECT_TRUE(same_bits(input.grad()[p], xp.grad())) << "input gradient " << p;
      EXPECT_TRUE(same_bits(stacked->weight.grad()[p], alone[p]->weight.grad())) << "weight gradient " << p;
      EXPECT_TRUE(same_bits(stacked->running_mean[p], alone[p]->running_mean)) << "running mean " << p;
      EXPECT_TRUE(same_bits(stacked->running_var[p], alone[p]->running_var)) << "running variance " << p;
      EXPECT_EQ(stacked->num_batches_tracked[p].item<std::int64_t>(), alone[p]->num_batches_tracked.item<std::int64_t>());
    }
  }
}

// The normalisation is LayerNorm's kernel row for row; the affine step is
// a separate product and sum (LayerNorm fuses them), and autograd sums the
// weight's gradient over the batch where LayerNorm's backward kernel has
// its own loop. Measured: outputs and input gradients within 2e-7 of the
// largest magnitude, weight and bias gradients within 1e-6 (float32 sums
// of 10 terms in another order). Bounds: 1e-6 and 1e-5.
TEST(StackedLayers, LayerNormIsEachMembersLayerNormToRounding) {
  torch::manual_seed(11);
  const std::vector<std::int64_t> shape{8, 7, 7};
  StackedLayerNorm stacked(kMembers, shape);
  {
    torch::NoGradGuard no_grad;
    stacked->weight.uniform_(0.5, 1.5);
    stacked->bias.uniform_(-0.5, 0.5);
  }
  const torch::Tensor x = leaf({kMembers, 10, 8, 7, 7}, 12);
  const torch::Tensor input = x.detach().requires_grad_(true);
  const torch::Tensor y = stacked->forward(input);
  const torch::Tensor grad_y = torch::randn(y.sizes());
  y.backward(grad_y);
  for (std::int64_t p = 0; p < kMembers; ++p) {
    torch::nn::LayerNorm alone{torch::nn::LayerNormOptions(shape)};
    {
      torch::NoGradGuard no_grad;
      alone->weight.copy_(stacked->weight[p]);
      alone->bias.copy_(stacked->bias[p]);
    }
    const torch::Tensor xp = x[p].detach().requires_grad_(true);
    const torch::Tensor yp = alone->forward(xp);
    yp.backward(grad_y[p]);
    EXPECT_LT(relative_difference(y.detach()[p], yp), 1e-6) << "output " << p;
    EXPECT_LT(relative_difference(input.grad()[p], xp.grad()), 1e-6) << "input grad " << p;
    EXPECT_LT(relative_difference(stacked->weight.grad()[p], alone->weight.grad()), 1e-5) << "weight grad " << p;
    EXPECT_LT(relative_difference(stacked->bias.grad()[p], alone->bias.grad()), 1e-5) << "bias grad " << p;
  }
}

// Batched products and per-row norms sum in another order than
// SpectralNorm's matrix-vector products and norms. Measured: u and the
// normalised weights within 1e-6 relative after five training passes,
// the weights' gradients within 1e-5. Bounds: 1e-5 and 1e-4. The same
// under bf16 autocast: the power iteration and sigma run in fp32 there
// too, stacked and alone (in bf16, u was 1e-3 off).
TEST(StackedLayers, SpectralNormIsEachMembersSpectralNormToRounding) {
  for (const Precision precision : {Precision::kFp32, Precision::kBf16}) {
    SCOPED_TRACE(precision == Precision::kFp32 ? "fp32" : "bf16");
    torch::manual_seed(13);
    StackedSpectralNorm stacked(kMembers, 32);
    std::vector<SpectralNorm> alone;
    for (std::int64_t p = 0; p < kMembers; ++p) {
      alone.emplace_back(32);
      torch::NoGradGuard no_grad;
      const_cast<torch::Tensor&>(alone[p]->u()).copy_(stacked->u[p]);
    }
    const torch::Tensor w = leaf({kMembers, 32, 16, 4, 4}, 14);
    // The forward passes under autocast, the backward after it, as training takes them.
    const auto forward = [precision](const std::function<torch::Tensor()>& pass) {
      const AutocastScope autocast(precision, torch::kCPU);
      torch::Tensor out;
      for (int k = 0; k < 5; ++k) out = pass();
      return out;
    };
    const torch::Tensor normalised = forward([&] { return stacked->forward(w); });
    const torch::Tensor grad = torch::randn(normalised.sizes());
    normalised.backward(grad);
    for (std::int64_t p = 0; p < kMembers; ++p) {
      const torch::Tensor wp = w[p].detach().requires_grad_(true);
      const torch::Tensor np = forward([&] { return alone[p]->forward(wp); });
      np.backward(grad[p]);
      EXPECT_LT(relative_difference(stacked->u[p], alone[p]->u()), 1e-5) << "u of member " << p;
      EXPECT_LT(relative_difference(normalised[p].detach(), np), 1e-5) << "W / sigma of member " << p;
      EXPECT_LT(relative_difference(w.grad()[p], wp.grad()), 1e-4) << "weight gradient of member " << p;
    }
    // Evaluation mode changes no u.
    stacked->eval();
    const torch::Tensor u = stacked->u.clone();
    stacked->forward(w);
    EXPECT_TRUE(same_bits(stacked->u, u));
  }
}

// Member p's mask is Dropout's, drawn from its own generator in the state
// Torch's global generator would be in; members sharing a generator draw
// one after another; outside training nothing is drawn.
TEST(StackedLayers, DropoutDrawsEachMembersMaskFromItsOwnGenerator) {
  const torch::Tensor x = torch::rand({kMembers, 6, 4, 5, 5}) + 0.5;
  const std::vector<at::Generator> generators{at::detail::createCPUGenerator(21), at::detail::createCPUGenerator(22),
                                              at::detail::createCPUGenerator(23)};
  const torch::Tensor y = stacked_dropout(x, 0.3, true, generators);
  torch::nn::Dropout dropout(0.3);
  for (std::int64_t p = 0; p < kMembers; ++p) {
    torch::manual_seed(21 + p);
    EXPECT_TRUE(same_bits(y[p], dropout->forward(x[p]))) << "member " << p;
  }
  // Another member beside member 0 does not change member 0's mask.
  const std::vector<at::Generator> alone{at::detail::createCPUGenerator(21)};
  const torch::Tensor y0 = stacked_dropout(x.narrow(0, 0, 1), 0.3, true, alone);
  EXPECT_TRUE(same_bits(y0[0], y[0]));
  EXPECT_TRUE(same_bits(stacked_dropout(x, 0.3, false, generators), x));
  EXPECT_THROW(stacked_dropout(x, 1.0, true, generators), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
