// The dynamic loss scale of fp16 training (training.precision: fp16), as
// PyTorch's GradScaler keeps it: the loss is multiplied by the scale before
// the backward pass, so that small gradients survive fp16; the gradients
// are divided by it again before clipping and Adam. A step whose gradients
// hold an Inf or NaN is skipped (Adam does not step, and the skip is
// counted, never taken for divergence) and the scale halves; after
// `growth_interval` finite steps in a row it doubles.
//
// Thread-safety: belongs to one trainer's thread.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace cellgan {

class LossScaler {
 public:
  explicit LossScaler(double initial = 65536.0, std::int64_t growth_interval = 2000);

  // loss · scale.
  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_; }
  // Divides each gradient by the scale, in place; whether all are finite.
  bool unscale(const std::vector<torch::Tensor>& gradients) const;
  // After a step: `finite` false halves the scale and counts a skip; true
  // counts towards the next doubling.
  void update(bool finite);

  double value() const { return scale_; }
  std::int64_t skipped() const { return skipped_; }

 private:
  double scale_;
  std::int64_t growth_interval_;
  std::int64_t finite_in_a_row_ = 0;
  std::int64_t skipped_ = 0;
};

}  // namespace cellgan
