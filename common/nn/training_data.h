// The training data of a run, kept compact and read as float32 rows in the
// range the networks produce: images in [-1, 1] (flat 784), toy mixtures as
// 2-D points generated from (seed, toy stream).
//
// Images stay one byte per pixel (9,000 MNIST images: 7 MB instead of
// 28 MB as float32); rows() scales the selected rows with pixel_value()
// (common/dataset.h), so the values are bit-identical to ImageData's.
//
// For the conditional networks (conditional_networks.h) a row is the image
// followed by the one-hot of its label (dim() 794).
//
// A class's data (layout per_class) is the rows labelled with that class,
// in the order of the file.
//
// Device: the data is uploaded to `device` once, when it is made; rows()
// takes an index on that device and returns rows there.
//
// Errors: the constructor throws InputError (from the dataset readers) when
// data is missing. Thread-safety: rows() is const and may be called from
// any thread.
#pragma once

#include <torch/types.h>

#include "common/config.h"

namespace cellgan {

class TrainingData {
 public:
  explicit TrainingData(const Config& config, torch::Device device = torch::kCPU);
  // Only the training images labelled `label` (0..9); image datasets only
  // (std::invalid_argument for toy data or a label out of range).
  TrainingData(const Config& config, int label, torch::Device device = torch::kCPU);

  std::int64_t size() const { return stored_.size(0); }
  torch::Device device() const { return stored_.device(); }
  std::int64_t dim() const { return stored_.size(1) + (labels_.defined() ? kClassCount : 0); }
  // float32 [index.numel(), dim()] for a 1-D int64 index.
  torch::Tensor rows(const torch::Tensor& index) const;

 private:
  torch::Tensor stored_;  // uint8 [N, dim] for images, float32 [N, 2] for toy data
  torch::Tensor values_;  // float32 [256]: pixel byte -> value (images only)
  torch::Tensor labels_;  // int64 [N], for the conditional networks only
};

}  // namespace cellgan
