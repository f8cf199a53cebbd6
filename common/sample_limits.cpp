// Checks of sample values (see sample_limits.h).
#include "common/sample_limits.h"

#include <fmt/format.h>

#include <cmath>

#include "common/error.h"

namespace cellgan {

void check_sample_values(const float* values, std::int64_t rows, std::int64_t cols, DatasetKind kind,
                         const std::string& source) {
  const bool images = !is_toy(kind);
  const float lo = -1.0f - kImageTolerance;
  const float hi = 1.0f + kImageTolerance;
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const float v = values[i];
    const bool finite = std::isfinite(v);
    if (finite && (!images || (v >= lo && v <= hi))) continue;
    const std::string where = fmt::format("value {} at [{}, {}] (row, column from 0)", v, i / cols, i % cols);
    if (!finite)
      throw InputError(fmt::format("{}: {}: expected finite samples", source, where));
    throw InputError(fmt::format("{}: {} is outside [-1, 1]: expected {} samples scaled as its training data are "
                                 "(a pixel p of 0..255 is p / 127.5 - 1)",
                                 source, where, to_string(kind)));
  }
}

}  // namespace cellgan
