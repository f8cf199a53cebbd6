// Tests of the toy mixtures and sample_toy (common/dataset.h): the mode
// layouts, determinism per seed, and the statistics of the samples.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

#include "common/dataset.h"

namespace cellgan {
namespace {

// Index of the mode nearest to point i.
std::size_t nearest_mode(const ToyMixture& mixture, const std::vector<float>& points, std::size_t i) {
  std::size_t best = 0;
  double best_d = 1e300;
  for (std::size_t k = 0; k < static_cast<std::size_t>(mixture.mode_count()); ++k) {
    const double d = std::hypot(points[2 * i] - mixture.modes[2 * k], points[2 * i + 1] - mixture.modes[2 * k + 1]);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

TEST(ToyMixture, RingHasEightModesOnRadiusTwo) {
  const ToyMixture ring = toy_mixture(DatasetKind::kRing);
  ASSERT_EQ(ring.mode_count(), 8);
  EXPECT_FLOAT_EQ(ring.sigma, 0.02f);
  std::set<long> angles;
  for (int k = 0; k < 8; ++k) {
    const double x = ring.modes[2 * k];
    const double y = ring.modes[2 * k + 1];
    EXPECT_NEAR(std::hypot(x, y), 2.0, 1e-6);
    angles.insert(std::lround(std::atan2(y, x) * 180.0 / std::acos(-1.0)));
  }
  EXPECT_EQ(angles, (std::set<long>{-135, -90, -45, 0, 45, 90, 135, 180}));
}

TEST(ToyMixture, GridHasTwentyFiveModes) {
  const ToyMixture grid = toy_mixture(DatasetKind::kGrid);
  ASSERT_EQ(grid.mode_count(), 25);
  EXPECT_FLOAT_EQ(grid.sigma, 0.05f);
  std::set<std::pair<float, float>> modes;
  for (int k = 0; k < 25; ++k) modes.insert({grid.modes[2 * k], grid.modes[2 * k + 1]});
  std::set<std::pair<float, float>> expected;
  for (const float x : {-4.0f, -2.0f, 0.0f, 2.0f, 4.0f}) {
    for (const float y : {-4.0f, -2.0f, 0.0f, 2.0f, 4.0f}) expected.insert({x, y});
  }
  EXPECT_EQ(modes, expected);
}

TEST(ToyMixture, ImageDatasetsAreNotMixtures) {
  EXPECT_THROW(toy_mixture(DatasetKind::kMnist), std::invalid_argument);
}

TEST(SampleToy, DeterminedBySeed) {
  const ToyMixture ring = toy_mixture(DatasetKind::kRing);
  const std::vector<float> a = sample_toy(ring, 500, 42);
  EXPECT_EQ(a.size(), 1000u);
  EXPECT_EQ(a, sample_toy(ring, 500, 42));
  const std::vector<float> b = sample_toy(ring, 500, 43);
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  EXPECT_LT(same, 10u);
  // A prefix of a longer draw: point i depends only on the seed and i.
  const std::vector<float> longer = sample_toy(ring, 800, 42);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), longer.begin()));
  EXPECT_TRUE(sample_toy(ring, 0, 42).empty());
  EXPECT_THROW(sample_toy(ring, -1, 42), std::invalid_argument);
}

TEST(SampleToy, ModesAreUniformAndNoiseHasSigma) {
  for (const DatasetKind kind : {DatasetKind::kRing, DatasetKind::kGrid}) {
    const ToyMixture mixture = toy_mixture(kind);
    const std::int64_t n = 40000;
    const std::vector<float> points = sample_toy(mixture, n, 7);
    std::vector<int> hits(static_cast<std::size_t>(mixture.mode_count()), 0);
    double sum_x = 0.0, sum_y = 0.0, sum_xx = 0.0, sum_yy = 0.0, sum_xy = 0.0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      const std::size_t k = nearest_mode(mixture, points, i);
      ++hits[k];
      const double dx = points[2 * i] - mixture.modes[2 * k];
      const double dy = points[2 * i + 1] - mixture.modes[2 * k + 1];
      sum_x += dx;
      sum_y += dy;
      sum_xx += dx * dx;
      sum_yy += dy * dy;
      sum_xy += dx * dy;
    }
    const double expected = static_cast<double>(n) / mixture.mode_count();
    for (const int h : hits) EXPECT_NEAR(h, expected, 5.0 * std::sqrt(expected)) << static_cast<int>(kind);
    const double sigma = mixture.sigma;
    EXPECT_NEAR(sum_x / n, 0.0, 0.05 * sigma);
    EXPECT_NEAR(sum_y / n, 0.0, 0.05 * sigma);
    EXPECT_NEAR(std::sqrt(sum_xx / n), sigma, 0.03 * sigma);
    EXPECT_NEAR(std::sqrt(sum_yy / n), sigma, 0.03 * sigma);
    EXPECT_NEAR(sum_xy / n, 0.0, 0.05 * sigma * sigma);
  }
}

}  // namespace
}  // namespace cellgan
