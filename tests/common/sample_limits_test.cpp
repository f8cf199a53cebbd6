// Tests of common/sample_limits.h: samples out of the data's range or not
// finite are named by file and position; toy samples only need be finite.
#include "common/sample_limits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;

// `rows` x 4 samples, all 0.5, with `value` at [row, col].
std::vector<float> with_value_at(std::int64_t rows, std::int64_t row, std::int64_t col, float value) {
  std::vector<float> v(static_cast<std::size_t>(rows * 4), 0.5f);
  v[static_cast<std::size_t>(row * 4 + col)] = value;
  return v;
}

std::string error_of(const std::vector<float>& v, DatasetKind kind) {
  return input_error_of([&] { check_sample_values(v.data(), static_cast<std::int64_t>(v.size()) / 4, 4, kind, "s.npy"); });
}

TEST(SampleLimits, ImagesInRangeAndWithinTheTolerancePass) {
  for (float edge : {-1.0f, 1.0f, 1.0f + kImageTolerance / 2, -1.0f - kImageTolerance / 2}) {
    const auto v = with_value_at(3, 1, 2, edge);
    EXPECT_NO_THROW(check_sample_values(v.data(), 3, 4, DatasetKind::kMnist, "s.npy")) << edge;
  }
}

TEST(SampleLimits, PixelsOf0To255AreNamedWithTheFirstPosition) {
  const std::string message = error_of(with_value_at(5, 3, 1, 255.0f), DatasetKind::kFashion);
  EXPECT_EQ(message, "s.npy: value 255 at [3, 1] (row, column from 0) is outside [-1, 1]: expected fashion samples "
                     "scaled as its training data are (a pixel p of 0..255 is p / 127.5 - 1)");
  EXPECT_NE(error_of(with_value_at(5, 0, 0, -1.5f), DatasetKind::kMnist).find("value -1.5 at [0, 0]"),
            std::string::npos);
}

TEST(SampleLimits, NonFiniteValuesAreNamedForImagesAndToyData) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(error_of(with_value_at(4, 2, 3, nan), DatasetKind::kMnist),
            "s.npy: value nan at [2, 3] (row, column from 0): expected finite samples");
  EXPECT_EQ(error_of(with_value_at(4, 0, 1, -inf), DatasetKind::kRing),
            "s.npy: value -inf at [0, 1] (row, column from 0): expected finite samples");
}

TEST(SampleLimits, TheFirstBadValueIsTheOneNamed) {
  auto v = with_value_at(6, 4, 0, 7.0f);
  v[1 * 4 + 2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(error_of(v, DatasetKind::kMnist).find("at [1, 2]"), std::string::npos);
}

TEST(SampleLimits, ToySamplesMayLieAnywhereFinite) {
  const auto v = with_value_at(3, 2, 2, 255.0f);
  EXPECT_NO_THROW(check_sample_values(v.data(), 3, 4, DatasetKind::kGrid, "s.npy"));
}

}  // namespace
}  // namespace cellgan
