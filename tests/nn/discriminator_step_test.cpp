// Tests of common/nn/discriminator_step: with gamma 0 it is the plain loss of
// its kind; the R1 term equals (gamma / 2) * mean ||grad_x D||^2 worked out by
// central finite differences; and its gradient reaches D's parameters. The
// same for WGAN-GP's gradient penalty, lambda * mean (||grad D(x^)|| - 1)^2,
// whose gradient with respect to the critic's parameters (double backward)
// is checked against finite differences too; and the wgan_gp step draws its
// interpolates from Torch's seeded generator.
#include "common/nn/discriminator_step.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "common/nn/losses.h"
#include "tests/nn/small_networks.h"

namespace cellgan {
namespace {

struct Fixture {
  Discriminator d{nullptr};  // built in the constructor, after the seed
  torch::Tensor real;
  torch::Tensor fake;
  explicit Fixture(DiscriminatorOutput output = DiscriminatorOutput::kProbability) {
    torch::manual_seed(7);
    NetworkShape shape = test::small_toy_shape();
    shape.d_output = output;
    d = Discriminator(shape);
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

// lambda * mean_i (||dD(x_i)/dx_i|| - 1)^2 by central differences.
double gp_by_finite_differences(Discriminator& d, const torch::Tensor& x, double lambda) {
  torch::NoGradGuard no_grad;
  constexpr double kStep = 1e-6;
  double total = 0.0;
  for (std::int64_t i = 0; i < x.size(0); ++i) {
    double squared_norm = 0.0;
    for (std::int64_t k = 0; k < x.size(1); ++k) {
      torch::Tensor up = x.narrow(0, i, 1).clone();
      torch::Tensor down = up.clone();
      up[0][k] += kStep;
      down[0][k] -= kStep;
      const double slope = (d->forward(up).item<double>() - d->forward(down).item<double>()) / (2 * kStep);
      squared_norm += slope * slope;
    }
    total += (std::sqrt(squared_norm) - 1.0) * (std::sqrt(squared_norm) - 1.0);
  }
  return lambda * total / static_cast<double>(x.size(0));
}

// The penalty at `x` through autograd (what the trainer computes).
torch::Tensor gp_by_autograd(Discriminator& d, const torch::Tensor& x, double lambda) {
  const torch::Tensor leaf = x.detach().requires_grad_(true);
  return gradient_penalty_at(d->forward(leaf), leaf, lambda);
}

TEST(GradientPenalty, MatchesFiniteDifferences) {
  Fixture f(DiscriminatorOutput::kScore);
  const double lambda = 10.0;
  const torch::Tensor x = 0.3 * f.real + 0.7 * f.fake;
  const double expected = gp_by_finite_differences(f.d, x, lambda);
  ASSERT_GT(expected, 1e-3);  // the critic's slopes are not all 1, so the test can tell
  EXPECT_NEAR(gp_by_autograd(f.d, x, lambda).item<double>(), expected, 1e-6 * expected);
  EXPECT_NEAR(gp_by_autograd(f.d, x, 2.5).item<double>(), expected / 4, 1e-6 * expected);
}

// d(penalty)/d(parameter) by autograd's double backward, against central
// differences of the penalty in every parameter of the first layer.
TEST(GradientPenalty, ItsGradientInTheCriticsParametersMatchesFiniteDifferences) {
  Fixture f(DiscriminatorOutput::kScore);
  const double lambda = 10.0;
  const torch::Tensor x = 0.6 * f.real + 0.4 * f.fake;
  for (auto& p : f.d->parameters()) p.mutable_grad() = torch::Tensor();
  gp_by_autograd(f.d, x, lambda).backward();
  torch::Tensor weight = f.d->parameters().front();
  const torch::Tensor by_autograd = weight.grad().clone();
  ASSERT_GT(by_autograd.abs().max().item<double>(), 1e-3);
  constexpr double kStep = 1e-6;
  const torch::Tensor flat = weight.view({-1});
  for (std::int64_t k = 0; k < flat.numel(); ++k) {
    SCOPED_TRACE(k);
    const double was = flat[k].item<double>();
    const auto penalty_at = [&](double value) {
      {
        torch::NoGradGuard no_grad;
        flat[k].fill_(value);
      }
      return gp_by_autograd(f.d, x, lambda).item<double>();
    };
    const double slope = (penalty_at(was + kStep) - penalty_at(was - kStep)) / (2 * kStep);
    penalty_at(was);
    EXPECT_NEAR(by_autograd.view({-1})[k].item<double>(), slope, 1e-5 * std::max(1.0, std::abs(slope)));
  }
}

TEST(GradientPenalty, TheWganGpStepIsTheLossPlusThePenaltyOnSeededInterpolates) {
  Fixture f(DiscriminatorOutput::kScore);
  const double lambda = 10.0;
  torch::manual_seed(99);
  const double step = discriminator_step_loss(f.d, LossKind::kWganGp, f.real, f.fake, DiscriminatorPenalties{0.0, lambda})
                          .item<double>();
  torch::manual_seed(99);
  const torch::Tensor e = torch::rand({f.real.size(0), 1}, torch::kFloat64);
  const double loss = discriminator_loss(LossKind::kWganGp, f.d->forward(f.real), f.d->forward(f.fake)).item<double>();
  const double penalty = gp_by_finite_differences(f.d, e * f.real + (1 - e) * f.fake, lambda);
  EXPECT_NEAR(step, loss + penalty, 1e-6 * penalty);
  // Same seed, same value to the bit.
  torch::manual_seed(99);
  EXPECT_EQ(discriminator_step_loss(f.d, LossKind::kWganGp, f.real, f.fake, DiscriminatorPenalties{0.0, lambda})
                .item<double>(),
            step);
  EXPECT_FALSE(f.real.requires_grad());
  EXPECT_FALSE(f.fake.requires_grad());
}

TEST(GradientPenalty, LambdaZeroIsThePlainCriticLossAndDrawsNothing) {
  Fixture f(DiscriminatorOutput::kScore);
  const double plain =
      discriminator_loss(LossKind::kWganGp, f.d->forward(f.real), f.d->forward(f.fake)).item<double>();
  torch::manual_seed(5);
  const double step =
      discriminator_step_loss(f.d, LossKind::kWganGp, f.real, f.fake, DiscriminatorPenalties{0.0, 0.0}).item<double>();
  EXPECT_EQ(step, plain);
  const double next = torch::rand({1}).item<double>();
  torch::manual_seed(5);
  EXPECT_EQ(torch::rand({1}).item<double>(), next);
}

TEST(GradientPenalty, TheR1OnlyOverloadRefusesWganGp) {
  Fixture f(DiscriminatorOutput::kScore);
  EXPECT_THROW(discriminator_step_loss(f.d, LossKind::kWganGp, f.real, f.fake, 0.0), std::invalid_argument);
  EXPECT_THROW(discriminator_step_loss(f.d, LossKind::kWganGp, f.real, f.fake, DiscriminatorPenalties{1.0, 10.0}),
               std::invalid_argument);
}

TEST(GradientPenalty, ASpectrallyNormalisedCriticTrainsWithIt) {
  torch::manual_seed(3);
  NetworkShape shape;
  shape.kind = NetworkKind::kSngan;
  shape.d_output = DiscriminatorOutput::kScore;
  Discriminator critic(shape);
  const torch::Tensor real = torch::rand({4, 784}) * 2 - 1;
  const torch::Tensor fake = torch::rand({4, 784}) * 2 - 1;
  const torch::Tensor loss =
      discriminator_step_loss(critic, LossKind::kWganGp, real, fake, DiscriminatorPenalties{0.0, 10.0});
  loss.backward();
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  for (const auto& p : critic->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>());
  }
}

}  // namespace
}  // namespace cellgan
