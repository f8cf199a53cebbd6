// Datasets as plain arrays (no Torch): the image datasets read from IDX
// folders, and the toy 2-D mixtures generated from a seed (docs/operations.md, "Data and the classifier").
//
// Image pixels are scaled to [-1, 1] as float32. Labels are 0..9.
//
// Thread-safety: free functions; results are independent values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"

namespace cellgan {

enum class Split { kTrain, kTest };

struct ImageData {
  std::int64_t count = 0;
  std::int64_t rows = 28;
  std::int64_t cols = 28;
  std::vector<float> pixels;          // count * rows * cols, in [-1, 1]
  std::vector<std::uint8_t> labels;   // count
  std::int64_t dim() const { return rows * cols; }
};

// A split as the IDX files hold it: one byte per pixel, a quarter of the
// memory of ImageData. pixel_value() is the one scaling to [-1, 1].
struct ImageBytes {
  std::int64_t count = 0;
  std::int64_t rows = 28;
  std::int64_t cols = 28;
  std::vector<std::uint8_t> pixels;   // count * rows * cols, 0..255
  std::vector<std::uint8_t> labels;   // count
  std::int64_t dim() const { return rows * cols; }
};

// A pixel byte as the networks see it: p / 127.5 - 1, in [-1, 1].
inline float pixel_value(std::uint8_t p) { return static_cast<float>(p) / 127.5f - 1.0f; }

// The IDX folder a configuration uses (DataConfig::path or the default).
std::string dataset_folder(const DataConfig& data);

// Loads one split of an image dataset (mnist, fashion or idx) from its
// folder. Looks for "{train,t10k}-{images-idx3,labels-idx1}-ubyte" with or
// without ".gz". Applies train_limit to the training split. Throws
// InputError naming the folder or file when data is missing or malformed.
ImageData load_image_data(const DataConfig& data, Split split);
// The same split, unscaled (same checks and errors).
ImageBytes load_image_bytes(const DataConfig& data, Split split);
// The labels of the split alone (0..9, train_limit applied to the training
// split), without reading the images: their count is not checked against
// the images file, which the loaders above do.
std::vector<std::uint8_t> load_labels(const DataConfig& data, Split split);
// The existence checks of both loaders for both splits, without reading
// any file: throws the same InputError they would. Does nothing for the
// toy mixtures. Lets a run name a missing dataset before anything else.
void check_image_files(const DataConfig& data);

// A Gaussian mixture on the plane.
struct ToyMixture {
  std::vector<float> modes;  // m * 2 (x, y)
  float sigma = 0.0f;
  std::int64_t mode_count() const { return static_cast<std::int64_t>(modes.size() / 2); }
};

// ring: 8 modes on a circle of radius 2, sigma 0.02.
// grid: 25 modes at {-4,-2,0,2,4}^2, sigma 0.05.
ToyMixture toy_mixture(DatasetKind kind);

// n points (n * 2 floats) drawn uniformly over modes plus N(0, sigma^2)
// noise, fully determined by `seed`.
std::vector<float> sample_toy(const ToyMixture& mixture, std::int64_t n, std::uint64_t seed);

// Mode metrics (VEEGAN / PacGAN): a sample is high quality within 3 sigma
// of its nearest mode; a mode is covered when it is the nearest mode of at
// least one high-quality sample; reverse KL is KL(q || uniform) where q is
// the histogram of nearest modes of the high-quality samples (0 when
// no sample is high quality is not defined: then it is +inf).
// mode_tvd is the total variation distance between the samples' labels and
// the mixture's: each high-quality sample is labelled with its nearest
// mode, every other sample with an extra "off mode" label, and the mixture
// puts 1/m on each mode and nothing off mode:
//   mode_tvd = 1/2 (off-mode fraction + sum_k |hits_k / n - 1/m|)   in [0, 1]
// It is 0 only when every sample is high quality and the modes are evenly
// hit, so it rewards precision and coverage together (the toy data's
// counterpart of the classifier TVD on images).
struct ModeReport {
  std::int64_t modes_covered = 0;
  std::int64_t mode_count = 0;
  double high_quality_fraction = 0.0;  // in [0, 1]
  double reverse_kl = 0.0;
  double mode_tvd = 1.0;
};
ModeReport score_modes(const ToyMixture& mixture, const std::vector<float>& points);

}  // namespace cellgan
