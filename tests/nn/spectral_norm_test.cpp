// Tests of common/nn/spectral_norm: power iteration finds the largest
// singular value (checked against the SVD's, torch::linalg_svdvals); the normalised
// weight has spectral norm 1; u is a buffer that only training mode
// updates; gradients (and the second derivatives of a gradient penalty)
// reach the layer's weight; the SN layers compute what Linear and Conv2d
// compute with W / sigma.
#include "common/nn/spectral_norm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace cellgan {
namespace {

double largest_singular_value(const torch::Tensor& weight) {
  return torch::linalg_svdvals(weight.reshape({weight.size(0), -1}).to(torch::kFloat64)).max().item<double>();
}

TEST(SpectralNorm, PowerIterationFindsTheLargestSingularValue) {
  torch::manual_seed(5);
  // A linear weight, a convolution's (read as 8 x 3*4*4), and a wide one.
  for (const auto& sizes : std::vector<std::vector<std::int64_t>>{{5, 7}, {8, 3, 4, 4}, {1, 50}, {40, 3}}) {
    SCOPED_TRACE(sizes.size() == 2 ? std::to_string(sizes[0]) + "x" + std::to_string(sizes[1]) : "conv");
    const torch::Tensor w = torch::randn(sizes, torch::kFloat64);
    SpectralNorm sn(sizes[0]);
    sn->to(torch::kFloat64);
    const double truth = largest_singular_value(w);
    // A fresh u is a poor estimate (a random direction): the test can tell.
    if (sizes[0] > 1) {
      EXPECT_LT(sn->sigma(w).item<double>(), 0.999 * truth);
    }
    torch::Tensor normalised;
    for (int i = 0; i < 200; ++i) normalised = sn->forward(w);
    EXPECT_NEAR(sn->sigma(w).item<double>(), truth, 1e-9 * truth);
    EXPECT_NEAR(largest_singular_value(normalised), 1.0, 1e-9);
    EXPECT_NEAR(sn->u().norm().item<double>(), 1.0, 1e-12);
  }
}

TEST(SpectralNorm, OneStepPerTrainingForwardAndNoneInEvaluation) {
  torch::manual_seed(6);
  const torch::Tensor w = torch::randn({6, 9});
  SpectralNorm sn(6);
  const torch::Tensor u0 = sn->u().clone();
  sn->eval();
  const torch::Tensor frozen = sn->forward(w);
  EXPECT_TRUE(torch::equal(sn->u(), u0));
  EXPECT_TRUE(torch::allclose(frozen, w / torch::mv(w.t(), u0).norm()));
  sn->train();
  sn->forward(w);
  // One power-iteration step: u <- normalise(W normalise(W^T u)).
  const torch::Tensor v = torch::mv(w.t(), u0) / torch::mv(w.t(), u0).norm();
  const torch::Tensor u1 = torch::mv(w, v) / torch::mv(w, v).norm();
  EXPECT_TRUE(torch::allclose(sn->u(), u1, 1e-6, 1e-6));
}

TEST(SpectralNorm, UIsABufferOfTheLayers) {
  torch::manual_seed(7);
  SNLinear linear(4, 3);
  SNConv2d conv(Conv2dGeometry{2, 5, /*kernel=*/3});
  const auto linear_buffers = linear->named_buffers();
  ASSERT_TRUE(linear_buffers.contains("sn.u"));
  EXPECT_EQ(linear_buffers["sn.u"].sizes(), (std::vector<std::int64_t>{3}));
  ASSERT_TRUE(conv->named_buffers().contains("sn.u"));
  EXPECT_EQ(conv->named_buffers()["sn.u"].sizes(), (std::vector<std::int64_t>{5}));
  // Parameters are the plain layer's.
  EXPECT_TRUE(linear->named_parameters().contains("layer.weight"));
  EXPECT_TRUE(linear->named_parameters().contains("layer.bias"));
  EXPECT_EQ(conv->named_parameters().size(), 2u);
}

TEST(SpectralNorm, LayersComputeThePlainLayerWithTheNormalisedWeight) {
  torch::manual_seed(8);
  SNLinear linear(4, 3);
  SNConv2d conv(Conv2dGeometry{2, 5, /*kernel=*/3, /*stride=*/2, /*padding=*/1});
  linear->eval();
  conv->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({7, 4});
  const torch::Tensor wl = linear->layer()->weight / linear->sn()->sigma(linear->layer()->weight);
  EXPECT_TRUE(torch::allclose(linear->forward(x), torch::addmm(linear->layer()->bias, x, wl.t())));
  const torch::Tensor img = torch::randn({2, 2, 9, 9});
  const torch::Tensor wc = conv->layer()->weight / conv->sn()->sigma(conv->layer()->weight);
  EXPECT_TRUE(torch::allclose(conv->forward(img),
                              torch::conv2d(img, wc, conv->layer()->bias, /*stride=*/2, /*padding=*/1), 1e-5, 1e-6));
  EXPECT_EQ(conv->forward(img).sizes(), (std::vector<std::int64_t>{2, 5, 5, 5}));
}

TEST(SpectralNorm, GradientsReachTheWeightThroughSigma) {
  torch::manual_seed(9);
  SNLinear linear(4, 3);
  const torch::Tensor x = torch::randn({7, 4});
  // Two training forwards before one backward: the second's update of u
  // must not break the first's graph.
  const torch::Tensor first = linear->forward(x).square().sum();
  const torch::Tensor second = linear->forward(x).sum();
  (first + second).backward();
  ASSERT_TRUE(linear->layer()->weight.grad().defined());
  EXPECT_GT(linear->layer()->weight.grad().abs().sum().item<double>(), 0.0);

  // Double backward: a gradient penalty through the layer reaches the weight.
  linear->layer()->weight.mutable_grad() = torch::Tensor();
  const torch::Tensor leaf = x.clone().requires_grad_(true);
  const torch::Tensor out = torch::tanh(linear->forward(leaf)).sum();
  const torch::Tensor grad = torch::autograd::grad({out}, {leaf}, {}, true, true)[0];
  (grad.norm(2, 1) - 1.0).square().mean().backward();
  EXPECT_GT(linear->layer()->weight.grad().abs().sum().item<double>(), 0.0);
}

}  // namespace
}  // namespace cellgan
