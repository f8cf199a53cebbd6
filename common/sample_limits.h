// What a set of samples may be: how many are drawn at once, and which values
// a sample of a dataset may hold. Used by the configuration's sample counts,
// by `cellgan sample` and `cellgan score`.
//
// Thread-safety: constants and a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"

namespace cellgan {

// The most samples drawn or scored at once (a key's count, `sample -n`,
// `score -n`): 100,000 images are 314 MB of float32 before the networks'
// activations, a bound every machine that trains can hold.
inline constexpr std::int64_t kMaxSamples = 100000;

// How far an image sample may stray outside [-1, 1] (rounding of the
// generators' tanh, a file written with another precision).
inline constexpr float kImageTolerance = 0.01f;

// Throws InputError naming `source` and the first bad value's position
// ("s.npy: value 255 at [0, 12] is outside [-1, 1]: ...") unless every value
// of the `rows` x `cols` row-major `values` is finite and, for images, within
// [-1 - kImageTolerance, 1 + kImageTolerance], the range of the scaled data
// and of the generators' tanh. Toy samples may be any finite value.
void check_sample_values(const float* values, std::int64_t rows, std::int64_t cols, DatasetKind kind,
                         const std::string& source);

}  // namespace cellgan
