// Layer normalisation for P members at once (docs/architecture.md,
// "Stacked networks"): torch::nn::LayerNorm over [C, H, W] (eps 1e-5,
// elementwise affine) per member, on [P, B, C, H, W]. Each sample of each
// member is normalised over its own
// C*H*W values by one torch::layer_norm without affine, then scaled and
// shifted by the member's weight and bias rows.
//
// The normalisation itself is LayerNorm's kernel row for row; the affine
// step is taken apart from it, so a member's output may differ from its
// own LayerNorm's in the last bit, and the weight's gradient (summed over
// the batch by autograd, not by LayerNorm's backward kernel) a few units
// in the last place (tests/nn/stacked_layers_test.cpp).
//
// tensors() lists weight [C, H, W] and bias [C, H, W] (LayerNorm's
// parameters()); no buffers. Fresh rows are LayerNorm's: weight 1, bias 0.
//
// Thread-safety: a module instance belongs to one thread at a time.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "common/nn/stacked_tensor.h"

namespace cellgan {

class StackedLayerNormImpl : public torch::nn::Module {
 public:
  // `member_sizes`: LayerNorm's normalized_shape, [C, H, W].
  StackedLayerNormImpl(std::int64_t members, std::vector<std::int64_t> member_sizes);

  // x: [P, B, C, H, W] -> the same sizes; std::invalid_argument on others.
  torch::Tensor forward(const torch::Tensor& x);
  // One member's: its x [B, C, H, W] with its weight and bias rows.
  torch::Tensor member_forward(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) const;

  std::vector<StackedTensor> tensors() const;

  torch::Tensor weight;  // [P, C, H, W]
  torch::Tensor bias;    // [P, C, H, W]

 private:
  std::int64_t members_;
  std::vector<std::int64_t> member_sizes_;
};
TORCH_MODULE(StackedLayerNorm);

}  // namespace cellgan
