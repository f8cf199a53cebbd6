// Tests of score_modes (common/dataset.h): samples of the mixture itself,
// collapsed samples, far-away samples and the 3-sigma boundary.
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
  }
}

TEST(ScoreModes, UnevenHistogramGivesItsKl) {
  const ToyMixture ring = toy_mixture(DatasetKind::kRing);
  std::vector<float> points;
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
