// Tests of common/nn/discriminator_step: with gamma 0 it is the plain loss of
// its kind; the R1 term equals (gamma / 2) * mean ||grad_x D||^2 worked out by
// central finite differences; and its gradient reaches D's parameters.
#include "common/nn/discriminator_step.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "common/nn/losses.h"
#include "tests/nn/small_networks.h"

namespace cellgan {
namespace {

struct Fixture {
  Discriminator d{nullptr};  // built in the constructor, after the seed
  torch::Tensor real;
  torch::Tensor fake;
  Fixture() {
    torch::manual_seed(7);
    d = Discriminator(test::small_toy_shape());
    d->to(torch::kFloat64);
    real = torch::randn({5, 2}, torch::kFloat64) * 2.0;
    fake = torch::randn({5, 2}, torch::kFloat64);
  }
};

// (gamma / 2) * mean_i sum_k (dD(x_i)/dx_ik)^2 by central differences.
double r1_by_finite_differences(Discriminator& d, const torch::Tensor& real, double gamma) {
  torch::NoGradGuard no_grad;
  constexpr double kStep = 1e-6;
  double total = 0.0;
  for (std::int64_t i = 0; i < real.size(0); ++i) {
    for (std::int64_t k = 0; k < real.size(1); ++k) {
      torch::Tensor up = real.narrow(0, i, 1).clone();
      torch::Tensor down = up.clone();
      up[0][k] += kStep;
      down[0][k] -= kStep;
      const double slope = (d->forward(up).item<double>() - d->forward(down).item<double>()) / (2 * kStep);
      total += slope * slope;
    }
  }
  return gamma / 2.0 * total / static_cast<double>(real.size(0));
}

TEST(DiscriminatorStep, WithoutPenaltyItIsTheLossOfItsKind) {
  Fixture f;
  for (LossKind kind : {LossKind::kBce, LossKind::kMse}) {
    const double plain = discriminator_loss(kind, f.d->forward(f.real), f.d->forward(f.fake)).item<double>();
    EXPECT_EQ(discriminator_step_loss(f.d, kind, f.real, f.fake, 0.0).item<double>(), plain);
  }
}

TEST(DiscriminatorStep, R1TermMatchesFiniteDifferences) {
  Fixture f;
  const double gamma = 3.0;
  const double plain = discriminator_step_loss(f.d, LossKind::kBce, f.real, f.fake, 0.0).item<double>();
  const double penalised = discriminator_step_loss(f.d, LossKind::kBce, f.real, f.fake, gamma).item<double>();
  const double expected = r1_by_finite_differences(f.d, f.real, gamma);
  ASSERT_GT(expected, 1e-6);  // the network is not flat, so the test can tell
  EXPECT_NEAR(penalised - plain, expected, 1e-6 * expected);
  EXPECT_FALSE(f.real.requires_grad());  // the caller's batch is left as it was
}

TEST(DiscriminatorStep, R1GradientReachesTheParameters) {
  Fixture f;
  const auto first_weight_grad = [&](double gamma) {
    for (auto& p : f.d->parameters()) p.mutable_grad() = torch::Tensor();
    discriminator_step_loss(f.d, LossKind::kBce, f.real, f.fake, gamma).backward();
    return f.d->parameters().front().grad().clone();
  };
  const torch::Tensor without = first_weight_grad(0.0);
  const torch::Tensor with = first_weight_grad(5.0);
  EXPECT_GT((with - without).abs().max().item<double>(), 1e-6);

  // The penalty alone has a gradient of its own (it is built with create_graph).
  for (auto& p : f.d->parameters()) p.mutable_grad() = torch::Tensor();
  const torch::Tensor leaf = f.real.detach().requires_grad_(true);
  r1_penalty(f.d->forward(leaf), leaf, 1.0).backward();
  EXPECT_GT(f.d->parameters().front().grad().abs().sum().item<double>(), 0.0);
}

}  // namespace
}  // namespace cellgan
