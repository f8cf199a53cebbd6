// Tests of common/nn/losses: each loss against values worked out by hand
// for small tensors, clamping of saturated outputs, and the Mustangs draw.
#include "common/nn/losses.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <vector>

namespace cellgan {
namespace {

constexpr double kTolerance = 1e-6;

double value(const torch::Tensor& t) { return t.item<double>(); }

// d_real = [0.9, 0.6], d_fake = [0.5, 0.2].
torch::Tensor d_real() { return torch::tensor({0.9, 0.6}, torch::kFloat64); }
torch::Tensor d_fake() { return torch::tensor({0.5, 0.2}, torch::kFloat64); }

TEST(LossesTest, BceByHand) {
  // G: -(log 0.5 + log 0.2) / 2.
  EXPECT_NEAR(value(generator_loss(LossKind::kBce, d_fake())), -(std::log(0.5) + std::log(0.2)) / 2, kTolerance);
  // D: -(log 0.9 + log 0.6) / 2 - (log 0.5 + log 0.8) / 2.
  const double expected = -(std::log(0.9) + std::log(0.6)) / 2 - (std::log(0.5) + std::log(0.8)) / 2;
  EXPECT_NEAR(value(discriminator_loss(LossKind::kBce, d_real(), d_fake())), expected, kTolerance);
}

TEST(LossesTest, BceMatchesTorchBinaryCrossEntropy) {
  const auto fake = d_fake();
  const auto torch_g = torch::binary_cross_entropy(fake, torch::ones_like(fake));
  EXPECT_NEAR(value(generator_loss(LossKind::kBce, fake)), value(torch_g), kTolerance);
}

TEST(LossesTest, MseByHand) {
  // G: ((0.5-1)^2 + (0.2-1)^2) / 2 = (0.25 + 0.64) / 2.
  EXPECT_NEAR(value(generator_loss(LossKind::kMse, d_fake())), (0.25 + 0.64) / 2, kTolerance);
  // D: ((0.1)^2 + (0.4)^2) / 2 + (0.5^2 + 0.2^2) / 2.
  EXPECT_NEAR(value(discriminator_loss(LossKind::kMse, d_real(), d_fake())), (0.01 + 0.16) / 2 + (0.25 + 0.04) / 2,
              kTolerance);
}

TEST(LossesTest, HeuristicByHand) {
  // G: -1/2 * (log 0.5 + log 0.2) / 2; D: as bce.
  EXPECT_NEAR(value(generator_loss(LossKind::kHeuristic, d_fake())), -0.5 * (std::log(0.5) + std::log(0.2)) / 2,
              kTolerance);
  EXPECT_NEAR(value(discriminator_loss(LossKind::kHeuristic, d_real(), d_fake())),
              value(discriminator_loss(LossKind::kBce, d_real(), d_fake())), kTolerance);
}

TEST(LossesTest, WganGpByHand) {
  // Raw critic scores: G: -(0.5 + 0.2) / 2; D: (0.5 + 0.2) / 2 - (0.9 + 0.6) / 2.
  EXPECT_NEAR(value(generator_loss(LossKind::kWganGp, d_fake())), -(0.5 + 0.2) / 2, kTolerance);
  EXPECT_NEAR(value(discriminator_loss(LossKind::kWganGp, d_real(), d_fake())), (0.5 + 0.2) / 2 - (0.9 + 0.6) / 2,
              kTolerance);
  // Scores are not probabilities: any real value, no clamping.
  const auto scores = torch::tensor({-30.0, 45.0}, torch::kFloat64);
  EXPECT_NEAR(value(generator_loss(LossKind::kWganGp, scores)), -7.5, kTolerance);
  EXPECT_EQ(discriminator_loss_for(LossKind::kWganGp), LossKind::kWganGp);
}

TEST(LossesTest, SaturatedDiscriminatorGivesFiniteLossesAndGradients) {
  const auto zeros = torch::zeros({3}, torch::kFloat32);
  const auto ones = torch::ones({3}, torch::kFloat32);
  const double clamped = -std::log(1e-8);
  EXPECT_NEAR(value(generator_loss(LossKind::kBce, zeros)), clamped, 1e-3);
  EXPECT_NEAR(value(generator_loss(LossKind::kHeuristic, zeros)), 0.5 * clamped, 1e-3);
  // D fooled both ways: real scored 0, fake scored 1.
  EXPECT_NEAR(value(discriminator_loss(LossKind::kBce, zeros, ones)), 2 * clamped, 1e-3);
  for (const auto kind : {LossKind::kBce, LossKind::kMse, LossKind::kHeuristic}) {
    auto fake = torch::full({4}, 0.3, torch::kFloat32).requires_grad_(true);
    auto loss = generator_loss(kind, fake);
    loss.backward();
    EXPECT_TRUE(torch::isfinite(fake.grad()).all().item<bool>());
    // Every generator loss falls as D rates the fakes as more real.
    EXPECT_LT(fake.grad().max().item<float>(), 0.0f);
  }
}

// training.bce: pytorch. The same values where p is not tiny; below 1e-8
// the clamped form's gradient is 0 and PyTorch's is not.
TEST(LossesTest, PyTorchBceKeepsAGradientWhereTheClampedOneHasNone) {
  EXPECT_NEAR(value(generator_loss(LossKind::kBce, d_fake(), BceForm::kPyTorch)),
              value(generator_loss(LossKind::kBce, d_fake(), BceForm::kClamped)), kTolerance);
  EXPECT_NEAR(value(discriminator_loss(LossKind::kBce, d_real(), d_fake(), BceForm::kPyTorch)),
              value(discriminator_loss(LossKind::kBce, d_real(), d_fake(), BceForm::kClamped)), kTolerance);
  const auto gradient = [](BceForm form) {
    auto fake = torch::tensor({1e-10, 0.5}, torch::kFloat64).requires_grad_(true);
    generator_loss(LossKind::kBce, fake, form).backward();
    return fake.grad();
  };
  EXPECT_EQ(value(gradient(BceForm::kClamped)[0]), 0.0);
  // d/dp of -log(p)/2 at p = 1e-10: -1 / (2p) = -5e9.
  EXPECT_NEAR(value(gradient(BceForm::kPyTorch)[0]) / -5e9, 1.0, 1e-6);
  EXPECT_NEAR(value(gradient(BceForm::kPyTorch)[1]), value(gradient(BceForm::kClamped)[1]), kTolerance);
  // A saturated D: PyTorch's log stops at -100 (the clamped one at log 1e-8).
  const auto zeros = torch::zeros({3}, torch::kFloat32);
  EXPECT_NEAR(value(generator_loss(LossKind::kBce, zeros, BceForm::kPyTorch)), 100.0, 1e-3);
  // heuristic's discriminator is bce, in the chosen form; its generator log stays clamped.
  const auto tiny = torch::full({2}, 1e-10, torch::kFloat64);
  EXPECT_NEAR(value(discriminator_loss(LossKind::kHeuristic, tiny, d_fake(), BceForm::kPyTorch)),
              value(discriminator_loss(LossKind::kBce, tiny, d_fake(), BceForm::kPyTorch)), kTolerance);
  EXPECT_NEAR(value(generator_loss(LossKind::kHeuristic, tiny, BceForm::kPyTorch)), -0.5 * std::log(1e-8), 1e-6);
  // The same values and gradients as torch::binary_cross_entropy, which
  // throws on NaN where this gives a NaN loss (a diverged copy is discarded).
  for (const double y : {1.0, 0.0}) {
    auto mine = torch::tensor({1e-10, 0.3, 0.9}, torch::kFloat64).requires_grad_(true);
    auto theirs = mine.detach().clone().requires_grad_(true);
    const auto a = y == 1.0 ? generator_loss(LossKind::kBce, mine, BceForm::kPyTorch)
                            : discriminator_loss(LossKind::kBce, torch::ones({3}, torch::kFloat64), mine,
                                                 BceForm::kPyTorch) - value(discriminator_loss(LossKind::kBce,
                                                 torch::ones({3}, torch::kFloat64), torch::zeros({3}, torch::kFloat64),
                                                 BceForm::kPyTorch));
    const auto b = torch::binary_cross_entropy(theirs, torch::full({3}, y, torch::kFloat64));
    EXPECT_NEAR(value(a), value(b), 1e-12);
    a.backward();
    b.backward();
    EXPECT_TRUE(torch::allclose(mine.grad(), theirs.grad(), 1e-12, 1e-12)) << mine.grad() << theirs.grad();
  }
  const auto nan = torch::full({2}, std::nan(""), torch::kFloat32);
  EXPECT_TRUE(std::isnan(value(generator_loss(LossKind::kBce, nan, BceForm::kPyTorch))));
}

TEST(LossesTest, DiscriminatorLossPairing) {
  EXPECT_EQ(discriminator_loss_for(LossKind::kBce), LossKind::kBce);
  EXPECT_EQ(discriminator_loss_for(LossKind::kMse), LossKind::kMse);
  EXPECT_EQ(discriminator_loss_for(LossKind::kHeuristic), LossKind::kBce);
}

TEST(LossesTest, UnresolvedMustangsIsRejected) {
  EXPECT_THROW(generator_loss(LossKind::kMustangs, d_fake()), std::invalid_argument);
  EXPECT_THROW(discriminator_loss(LossKind::kMustangs, d_real(), d_fake()), std::invalid_argument);
}

TEST(LossesTest, MustangsDrawsAllThreeUniformly) {
  SplitMix64 rng(2024);
  std::map<LossKind, int> counts;
  constexpr int kDraws = 3000;
  for (int i = 0; i < kDraws; ++i) ++counts[draw_mustangs_loss(rng)];
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts.count(LossKind::kMustangs), 0u);
  EXPECT_EQ(counts.count(LossKind::kWganGp), 0u);  // a critic cannot pair with the other losses
  for (const auto& [kind, count] : counts) {
    // 1000 expected; the standard deviation is about 26.
    EXPECT_GT(count, 850) << to_string(kind);
    EXPECT_LT(count, 1150) << to_string(kind);
  }
}

TEST(LossesTest, MustangsIsDeterministicPerSeed) {
  auto draws = [](std::uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<LossKind> out;
    for (int i = 0; i < 200; ++i) out.push_back(draw_mustangs_loss(rng));
    return out;
  };
  EXPECT_EQ(draws(5), draws(5));
  EXPECT_NE(draws(5), draws(6));
}

}  // namespace
}  // namespace cellgan
