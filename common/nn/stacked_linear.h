// A linear layer for P members at once (docs/architecture.md, "Stacked
// networks"): member p maps its rows x[p] of [B, in] to
// x[p] W[p]^T + b[p], with a weight W of [P, out, in] and a bias b of
// [P, 1, out], in one torch::baddbmm over x of [P, B, in]. Member p's
// output depends on member p's rows of x, W and b only, and so does its
// gradient.
//
// Each row is a torch::nn::Linear's weight [out, in] as it stands, and the
// three matrix products of a step are the ones Linear's autograd takes,
// with the same operands in the same layouts, batched: x W^T forward, then
// g W for the input's gradient and g^T x for the weight's (bmm's own
// backward would take x^T g, whose sums round differently). LibTorch runs
// a CPU bmm as one gemm per member, the gemm mm calls, once the product has
// 400 or more multiply-adds (below that it takes a plain loop of its own).
// A stacked GAN step then equals the members' own steps to the bit on the
// CPU for batches that are multiples of 16, and to the last bit otherwise
// (tests/nn/stacked_training_test.cpp). The bias's gradient is summed over
// the batch as Linear's is. The backward pass is itself differentiable
// (gradient penalties take a double backward).
//
// Under autocast (precision.h) the products run in its 16-bit type, as
// Linear's do, and each gradient returns in its input's type; the casts
// are part of the graph, so a double backward (R1) reaches the weights.
//
// tensors() maps the rows to Linear's weight and bias, in the order Linear
// lists them (stacked_tensor.h).
//
// Fresh rows are drawn as torch::nn::Linear draws its own (uniform in
// +-1/sqrt(in)), but not the same values: rows that must equal an
// individual's are loaded from it.
//
// Thread-safety: a module instance belongs to one thread at a time.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "common/nn/initial_weights.h"
#include "common/nn/stacked_tensor.h"

namespace cellgan {

class StackedLinearImpl : public torch::nn::Module {
 public:
  // kUndrawn (initial_weights.h): the rows hold no values, for a caller
  // that writes every one.
  StackedLinearImpl(std::int64_t members, std::int64_t in, std::int64_t out,
                    InitialWeights weights = InitialWeights::kDrawn);

  // x: [P, B, in] -> [P, B, out]; std::invalid_argument on other sizes.
  torch::Tensor forward(const torch::Tensor& x) { return forward_with(x, weight); }
  // The same with `w` ([P, out, in], e.g. a spectrally normalised weight)
  // in place of the weight.
  torch::Tensor forward_with(const torch::Tensor& x, const torch::Tensor& w);

  // The weight, then the bias, each with its Linear sizes.
  std::vector<StackedTensor> tensors() const;

  std::int64_t members() const { return members_; }
  std::int64_t in_features() const { return in_; }
  std::int64_t out_features() const { return out_; }

  torch::Tensor weight;  // [P, out, in]
  torch::Tensor bias;    // [P, 1, out]

 private:
  std::int64_t members_;
  std::int64_t in_;
  std::int64_t out_;
};
TORCH_MODULE(StackedLinear);

}  // namespace cellgan
