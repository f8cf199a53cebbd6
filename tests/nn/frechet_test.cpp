// Tests of fit_gaussian and frechet_distance (common/nn/scores): closed
// forms for diagonal, commuting and non-commuting 2x2 covariances, zero
// distance to itself, symmetry, singular covariances, and the fit itself.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "common/nn/scores.h"

namespace cellgan {
namespace {

torch::Tensor vec(std::vector<double> values) { return torch::tensor(values, torch::kFloat64); }

GaussianStats stats(const torch::Tensor& mean, const torch::Tensor& cov) { return GaussianStats{mean, cov}; }

double squared_distance(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).square().sum().item<double>(); }

// sum_i (sqrt(a_i) - sqrt(b_i))^2: the covariance part for commuting covariances.
double commuting_part(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += std::pow(std::sqrt(a[i]) - std::sqrt(b[i]), 2);
  return sum;
}

// A random symmetric positive definite d x d matrix.
torch::Tensor random_spd(std::int64_t d, std::uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  const auto m = torch::randn({d, d}, gen, torch::kFloat64);
  return m.mm(m.t()) + 0.1 * torch::eye(d, torch::kFloat64);
}

TEST(FrechetTest, DiagonalCovariancesMatchClosedForm) {
  const std::vector<double> a{1.0, 4.0, 9.0, 0.5};
  const std::vector<double> b{4.0, 1.0, 0.25, 0.5};
  const auto m1 = vec({0.0, 1.0, 2.0, -1.0});
  const auto m2 = vec({1.0, 1.0, 0.0, 0.5});
  const double expected = squared_distance(m1, m2) + commuting_part(a, b);
  EXPECT_NEAR(frechet_distance(stats(m1, torch::diag(vec(a))), stats(m2, torch::diag(vec(b)))), expected, 1e-9);
}

TEST(FrechetTest, CommutingCovariancesMatchClosedForm) {
  // A = Q diag(a) Q^T and B = Q diag(b) Q^T share eigenvectors.
  const std::vector<double> a{0.3, 2.0, 5.0};
  const std::vector<double> b{1.5, 0.1, 7.0};
  auto gen = at::detail::createCPUGenerator(/*seed_val=*/42);
  const auto q = std::get<0>(torch::linalg_qr(torch::randn({3, 3}, gen, torch::kFloat64)));
  const auto cov_a = q.mm(torch::diag(vec(a))).mm(q.t());
  const auto cov_b = q.mm(torch::diag(vec(b))).mm(q.t());
  const auto m1 = vec({1.0, -2.0, 0.5});
  const auto m2 = vec({0.0, 0.0, 0.0});
  const double expected = squared_distance(m1, m2) + commuting_part(a, b);
  EXPECT_NEAR(frechet_distance(stats(m1, cov_a), stats(m2, cov_b)), expected, 1e-9);
}

TEST(FrechetTest, NonCommuting2x2MatchesClosedForm) {
  // For 2x2 M = sqrt(A) B sqrt(A): tr sqrt(M) = sqrt(tr(AB) + 2 sqrt(det A det B)).
  const auto cov_a = torch::tensor({2.0, 0.5, 0.5, 1.0}, torch::kFloat64).reshape({2, 2});
  const auto cov_b = torch::tensor({1.0, -0.3, -0.3, 3.0}, torch::kFloat64).reshape({2, 2});
  ASSERT_FALSE(torch::allclose(cov_a.mm(cov_b), cov_b.mm(cov_a)));
  const double tr_ab = cov_a.mm(cov_b).trace().item<double>();
  const double det_a = 2.0 * 1.0 - 0.5 * 0.5;
  const double det_b = 1.0 * 3.0 - 0.3 * 0.3;
  const double tr_sqrt = std::sqrt(tr_ab + 2.0 * std::sqrt(det_a * det_b));
  const auto m1 = vec({0.5, 0.0});
  const auto m2 = vec({-0.5, 2.0});
  const double expected = squared_distance(m1, m2) + 3.0 + 4.0 - 2.0 * tr_sqrt;
  EXPECT_NEAR(frechet_distance(stats(m1, cov_a), stats(m2, cov_b)), expected, 1e-9);
  EXPECT_NEAR(frechet_distance(stats(m2, cov_b), stats(m1, cov_a)), expected, 1e-9);
}

TEST(FrechetTest, IdenticalStatisticsGiveZero) {
  const auto cov = random_spd(10, 1);
  const auto mean = vec(std::vector<double>(10, 3.0));
  const double scale = cov.trace().item<double>();
  EXPECT_NEAR(frechet_distance(stats(mean, cov), stats(mean.clone(), cov.clone())), 0.0, 1e-9 * scale);
}

TEST(FrechetTest, SymmetricInItsArguments) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto gen = at::detail::createCPUGenerator(seed);
    const auto a = stats(torch::randn({10}, gen, torch::kFloat64), random_spd(10, seed * 2));
    const auto b = stats(torch::randn({10}, gen, torch::kFloat64), random_spd(10, seed * 2 + 1));
    const double ab = frechet_distance(a, b);
    EXPECT_GT(ab, 0.0);
    EXPECT_NEAR(ab, frechet_distance(b, a), 1e-9 * ab);
  }
}

TEST(FrechetTest, SingularCovarianceIsHandled) {
  // All samples at one point: a zero covariance, d = |m1 - m2|^2 + tr(B).
  const auto cov_b = random_spd(4, 9);
  const auto m1 = vec({1.0, 2.0, 3.0, 4.0});
  const auto m2 = vec({0.0, 0.0, 0.0, 0.0});
  const double expected = squared_distance(m1, m2) + cov_b.trace().item<double>();
  const auto collapsed = stats(m1, torch::zeros({4, 4}, torch::kFloat64));
  EXPECT_NEAR(frechet_distance(collapsed, stats(m2, cov_b)), expected, 1e-8 * expected);
  EXPECT_NEAR(frechet_distance(stats(m2, cov_b), collapsed), expected, 1e-8 * expected);
  // A rank-one covariance (points on a line) stays finite and non-negative.
  const auto line = vec({1.0, 1.0, 0.0, 0.0});
  const auto rank_one = torch::outer(line, line);
  const double d = frechet_distance(stats(m1, rank_one), stats(m1, rank_one));
  EXPECT_TRUE(std::isfinite(d));
  EXPECT_NEAR(d, 0.0, 1e-7);
}

TEST(FrechetTest, FitGaussianByHand) {
  // Points (1,2), (3,4), (5,0): mean (3,2); deviations (-2,0), (0,2), (2,-2);
  // unbiased covariance [[8, -4], [-4, 8]] / 2.
  const auto features = torch::tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 0.0f}).reshape({3, 2});
  const auto fit = fit_gaussian(features);
  EXPECT_EQ(fit.mean.scalar_type(), torch::kFloat64);
  EXPECT_EQ(fit.cov.scalar_type(), torch::kFloat64);
  EXPECT_TRUE(torch::allclose(fit.mean, vec({3.0, 2.0})));
  EXPECT_TRUE(torch::allclose(fit.cov, torch::tensor({4.0, -2.0, -2.0, 4.0}, torch::kFloat64).reshape({2, 2})));
}

TEST(FrechetTest, FitsOfSamplesApproachTheirDistribution) {
  // x = m + L e with e ~ N(0, I): the fit approaches (m, L L^T), and the
  // distance between two such fits is small next to a shift of the mean.
  auto gen = at::detail::createCPUGenerator(/*seed_val=*/17);
  const auto chol = torch::tensor({1.0, 0.0, 0.0, 0.6, 0.8, 0.0, -0.5, 0.2, 0.5}, torch::kFloat64).reshape({3, 3});
  const auto mean = vec({1.0, -1.0, 2.0});
  auto sample = [&](std::int64_t n) { return torch::randn({n, 3}, gen, torch::kFloat64).mm(chol.t()) + mean; };
  const auto fit_a = fit_gaussian(sample(50000));
  const auto fit_b = fit_gaussian(sample(50000));
  EXPECT_TRUE(torch::allclose(fit_a.mean, mean, /*rtol=*/0.0, /*atol=*/0.03));
  EXPECT_TRUE(torch::allclose(fit_a.cov, chol.mm(chol.t()), /*rtol=*/0.0, /*atol=*/0.03));
  EXPECT_LT(frechet_distance(fit_a, fit_b), 0.01);
  const auto shifted = stats(fit_b.mean + vec({1.0, 0.0, 0.0}), fit_b.cov);
  EXPECT_NEAR(frechet_distance(fit_a, shifted), 1.0, 0.1);
}

TEST(FrechetTest, MalformedInputIsRejected) {
  EXPECT_THROW(fit_gaussian(torch::zeros({1, 3})), std::invalid_argument);
  EXPECT_THROW(fit_gaussian(torch::zeros({5})), std::invalid_argument);
  const auto a = stats(vec({0.0, 0.0}), torch::eye(2, torch::kFloat64));
  const auto b = stats(vec({0.0, 0.0, 0.0}), torch::eye(3, torch::kFloat64));
  EXPECT_THROW(frechet_distance(a, b), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
