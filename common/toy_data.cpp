// The toy 2-D Gaussian mixtures (ring and grid), sampling from them and the
// mode metrics (see common/dataset.h for the contract).
//
// Sampling uses only SplitMix64 (common/rng.h) and Box-Muller, never the
// standard library's distributions, whose output differs between library
// implementations; so a seed gives the same points everywhere.
//
// Thread-safety: free functions; results are independent values.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/dataset.h"
#include "common/rng.h"

namespace cellgan {

ToyMixture toy_mixture(DatasetKind kind) {
  ToyMixture mixture;
  if (kind == DatasetKind::kRing) {
    constexpr int kModes = 8;
    constexpr double kRadius = 2.0;
    const double pi = std::acos(-1.0);
    for (int k = 0; k < kModes; ++k) {
      const double angle = 2.0 * pi * k / kModes;
      mixture.modes.push_back(static_cast<float>(kRadius * std::cos(angle)));
      mixture.modes.push_back(static_cast<float>(kRadius * std::sin(angle)));
    }
    mixture.sigma = 0.02f;
  } else if (kind == DatasetKind::kGrid) {
    for (int i = -2; i <= 2; ++i) {
      for (int j = -2; j <= 2; ++j) {
        mixture.modes.push_back(2.0f * static_cast<float>(i));
        mixture.modes.push_back(2.0f * static_cast<float>(j));
      }
    }
    mixture.sigma = 0.05f;
  } else {
    throw std::invalid_argument("toy_mixture: only ring and grid are toy mixtures");
  }
  return mixture;
}

std::vector<float> sample_toy(const ToyMixture& mixture, std::int64_t n, std::uint64_t seed) {
  const std::int64_t m = mixture.mode_count();
  if (m < 1) throw std::invalid_argument("sample_toy: the mixture has no modes");
  if (n < 0) throw std::invalid_argument("sample_toy: negative sample count " + std::to_string(n));
  const double two_pi = 2.0 * std::acos(-1.0);
  SplitMix64 rng(seed);
  std::vector<float> points(static_cast<std::size_t>(n) * 2);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto mode = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(m)));
    // Box-Muller: u1 in (0, 1] so the logarithm is finite.
    const double u1 = 1.0 - rng.uniform();
    const double u2 = rng.uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double nx = radius * std::cos(two_pi * u2);
    const double ny = radius * std::sin(two_pi * u2);
    points[2 * i] = static_cast<float>(mixture.modes[2 * mode] + mixture.sigma * nx);
    points[2 * i + 1] = static_cast<float>(mixture.modes[2 * mode + 1] + mixture.sigma * ny);
  }
  return points;
}

ModeReport score_modes(const ToyMixture& mixture, const std::vector<float>& points) {
  const std::int64_t m = mixture.mode_count();
  if (m < 1) throw std::invalid_argument("score_modes: the mixture has no modes");
  if (points.size() % 2 != 0) throw std::invalid_argument("score_modes: points must be (x, y) pairs");
  const std::size_t n = points.size() / 2;
  const double limit = 3.0 * static_cast<double>(mixture.sigma);
  const double limit_squared = limit * limit;

  std::vector<std::int64_t> hits(static_cast<std::size_t>(m), 0);
  std::int64_t high_quality = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = points[2 * i];
    const double y = points[2 * i + 1];
    std::size_t nearest = 0;
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < static_cast<std::size_t>(m); ++k) {
      const double dx = x - mixture.modes[2 * k];
      const double dy = y - mixture.modes[2 * k + 1];
      const double d = dx * dx + dy * dy;
      if (d < best) {
        best = d;
        nearest = k;
      }
    }
    // NaN points compare false and are never high quality.
    if (best <= limit_squared) {
      ++hits[nearest];
      ++high_quality;
    }
  }

  ModeReport report;
  report.mode_count = m;
  report.high_quality_fraction = n == 0 ? 0.0 : static_cast<double>(high_quality) / static_cast<double>(n);
  if (n > 0) {
    double distance = 1.0 - report.high_quality_fraction;  // the off-mode label
    for (const std::int64_t h : hits)
      distance += std::abs(static_cast<double>(h) / static_cast<double>(n) - 1.0 / static_cast<double>(m));
    report.mode_tvd = 0.5 * distance;
  }
  if (high_quality == 0) {
    report.reverse_kl = std::numeric_limits<double>::infinity();
    return report;
  }
  double kl = 0.0;
  for (const std::int64_t h : hits) {
    if (h == 0) continue;
    ++report.modes_covered;
    const double q = static_cast<double>(h) / static_cast<double>(high_quality);
    kl += q * std::log(q * static_cast<double>(m));
  }
  report.reverse_kl = kl;
  return report;
}

}  // namespace cellgan
