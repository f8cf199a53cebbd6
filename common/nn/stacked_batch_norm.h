// Batch normalisation for P members at once (docs/architecture.md,
// "Stacked networks"): torch::nn::BatchNorm2d (eps 1e-5, momentum 0.1,
// affine, tracking running statistics) per member on [P, B, C, H, W]:
// member p's statistics are over its own rows. On CUDA it is one
// torch::batch_norm over the grouped layout [B, P*C, H, W] (stacked_conv.h),
// whose channels are normalised apart; on the CPU each member's own
// torch::batch_norm, one after another (as BatchNorm2d's, to the bit).
//
// Training mode, as BatchNorm2d: normalises by the batch's statistics,
// updates each member's running mean and variance by momentum 0.1 and adds
// one to each member's num_batches_tracked. Evaluation mode: normalises by
// the running statistics and changes nothing.
//
// tensors() lists weight [C] and bias [C] (BatchNorm2d's parameters()),
// buffer_tensors() running_mean [C], running_var [C] and
// num_batches_tracked [] (its buffers()), as rows of [P, C] and [P]
// (stacked_tensor.h). Fresh rows are BatchNorm2d's: weight 1, bias 0, mean
// 0, variance 1, count 0.
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

class StackedBatchNorm2dImpl : public torch::nn::Module {
 public:
  StackedBatchNorm2dImpl(std::int64_t members, std::int64_t channels);

  // x: [P, B, C, H, W] -> the same sizes; std::invalid_argument on others.
  torch::Tensor forward(const torch::Tensor& x);
  // Member p's batch norm on the CPU: its x [B, C, H, W] with its weight
  // and bias rows `w`, `b` (taken by unbind(), once per pass); in training
  // its running statistics are updated and its count raised by one.
  torch::Tensor member_forward(const torch::Tensor& x, std::int64_t p, const torch::Tensor& w, const torch::Tensor& b);

  std::vector<StackedTensor> tensors() const;
  std::vector<StackedTensor> buffer_tensors() const;

  torch::Tensor weight;               // [P, C]
  torch::Tensor bias;                 // [P, C]
  torch::Tensor running_mean;         // [P, C]
  torch::Tensor running_var;          // [P, C]
  torch::Tensor num_batches_tracked;  // [P], int64

 private:
  std::int64_t members_;
  std::int64_t channels_;
};
TORCH_MODULE(StackedBatchNorm2d);

}  // namespace cellgan
