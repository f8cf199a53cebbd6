// Tests of score_modes (common/dataset.h): samples of the mixture itself,
// collapsed samples, far-away samples, the 3-sigma boundary and the mode
// TVD (the toy objective).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/dataset.h"

namespace cellgan {
namespace {

TEST(ScoreModes, SamplesOfTheMixtureCoverEveryMode) {
  // For 2-D Gaussian noise, P(|noise| <= 3 sigma) = 1 - exp(-9 / 2).
  const double within_three_sigma = 1.0 - std::exp(-4.5);
  for (const DatasetKind kind : {DatasetKind::kRing, DatasetKind::kGrid}) {
    const ToyMixture mixture = toy_mixture(kind);
    const ModeReport report = score_modes(mixture, sample_toy(mixture, 20000, 11));
    EXPECT_EQ(report.mode_count, mixture.mode_count());
    EXPECT_EQ(report.modes_covered, mixture.mode_count());
    EXPECT_GE(report.high_quality_fraction, 0.98);
    EXPECT_NEAR(report.high_quality_fraction, within_three_sigma, 0.005);
    EXPECT_GE(report.reverse_kl, 0.0);
    EXPECT_LT(report.reverse_kl, 0.01);
    // Only sampling noise and the 1.1% beyond 3 sigma are left.
    EXPECT_LT(report.mode_tvd, 0.05);
    EXPECT_GT(report.mode_tvd, 0.5 * (1.0 - within_three_sigma));
  }
}

TEST(ScoreModes, CollapsedSamplesCoverOneMode) {
  for (const DatasetKind kind : {DatasetKind::kRing, DatasetKind::kGrid}) {
    const ToyMixture mixture = toy_mixture(kind);
    std::vector<float> points;
    for (int i = 0; i < 100; ++i) {
      points.push_back(mixture.modes[2] + 0.5f * mixture.sigma * (i % 3 - 1));
      points.push_back(mixture.modes[3]);
    }
    const ModeReport report = score_modes(mixture, points);
    EXPECT_EQ(report.modes_covered, 1);
    EXPECT_DOUBLE_EQ(report.high_quality_fraction, 1.0);
    EXPECT_NEAR(report.reverse_kl, std::log(static_cast<double>(mixture.mode_count())), 1e-12);
    const double m = static_cast<double>(mixture.mode_count());
    EXPECT_NEAR(report.mode_tvd, (m - 1.0) / m, 1e-12);
  }
}

TEST(ScoreModes, ModeTvdCountsOffModeSamplesAndUnevenModes) {
  const ToyMixture ring = toy_mixture(DatasetKind::kRing);
  // One sample on each of the 8 modes: perfect.
  std::vector<float> even(ring.modes.begin(), ring.modes.end());
  EXPECT_NEAR(score_modes(ring, even).mode_tvd, 0.0, 1e-12);
  // The same plus 8 samples off every mode: half the mass is off mode.
  std::vector<float> half_off = even;
  for (int i = 0; i < 8; ++i) half_off.insert(half_off.end(), {0.0f, 0.0f});
  EXPECT_NEAR(score_modes(ring, half_off).mode_tvd, 0.5, 1e-12);
  // 4 modes hit twice each: 1/2 (0 + 4 * |2/8 - 1/8| + 4 * 1/8) = 1/2.
  std::vector<float> four_modes;
  for (int k = 0; k < 4; ++k)
    for (int twice = 0; twice < 2; ++twice) four_modes.insert(four_modes.end(), {ring.modes[2 * k], ring.modes[2 * k + 1]});
  EXPECT_NEAR(score_modes(ring, four_modes).mode_tvd, 0.5, 1e-12);
  // Nothing on a mode, and no samples at all: the maximum.
  EXPECT_DOUBLE_EQ(score_modes(ring, {0.0f, 0.0f}).mode_tvd, 1.0);
  EXPECT_DOUBLE_EQ(score_modes(ring, {}).mode_tvd, 1.0);
}

TEST(ScoreModes, UnevenHistogramGivesItsKl) {
  const ToyMixture ring = toy_mixture(DatasetKind::kRing);
  std::vector<float> points;
  points.reserve(10);  // five points (and no -Wstringop-overflow false alarm from GCC 12)
  for (int i = 0; i < 3; ++i) points.insert(points.end(), {ring.modes[0], ring.modes[1]});
  points.insert(points.end(), {ring.modes[8], ring.modes[9]});
  points.insert(points.end(), {50.0f, 50.0f});  // low quality: ignored by q
  const ModeReport report = score_modes(ring, points);
  EXPECT_EQ(report.modes_covered, 2);
  EXPECT_DOUBLE_EQ(report.high_quality_fraction, 0.8);
  EXPECT_NEAR(report.reverse_kl, 0.75 * std::log(0.75 * 8) + 0.25 * std::log(0.25 * 8), 1e-12);
}

TEST(ScoreModes, FarAwaySamplesHaveNoQuality) {
  const ToyMixture grid = toy_mixture(DatasetKind::kGrid);
  const std::vector<float> points = {1.0f, 1.0f, 10.0f, -10.0f, 3.0f, 0.0f};
  const ModeReport report = score_modes(grid, points);
  EXPECT_EQ(report.modes_covered, 0);
  EXPECT_EQ(report.high_quality_fraction, 0.0);
  EXPECT_EQ(report.reverse_kl, std::numeric_limits<double>::infinity());
  EXPECT_EQ(score_modes(grid, {}).reverse_kl, std::numeric_limits<double>::infinity());
}

TEST(ScoreModes, ThreeSigmaBoundary) {
  const ToyMixture ring = toy_mixture(DatasetKind::kRing);
  const float x = ring.modes[0];
  const float s = ring.sigma;
  EXPECT_DOUBLE_EQ(score_modes(ring, {x + 2.9f * s, 0.0f}).high_quality_fraction, 1.0);
  EXPECT_DOUBLE_EQ(score_modes(ring, {x, 2.9f * s}).high_quality_fraction, 1.0);
  EXPECT_DOUBLE_EQ(score_modes(ring, {x + 3.1f * s, 0.0f}).high_quality_fraction, 0.0);
  // Euclidean distance: 2.5 sigma on both axes is 3.5 sigma away.
  EXPECT_DOUBLE_EQ(score_modes(ring, {x + 2.5f * s, 2.5f * s}).high_quality_fraction, 0.0);
  EXPECT_DOUBLE_EQ(score_modes(ring, {std::nanf(""), 0.0f}).high_quality_fraction, 0.0);
}

TEST(ScoreModes, OddCoordinateCountIsAnError) {
  EXPECT_THROW(score_modes(toy_mixture(DatasetKind::kRing), {1.0f, 2.0f, 3.0f}), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
