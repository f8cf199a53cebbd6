// A 2-d convolution for P members at once (docs/architecture.md, "Stacked
// networks") on activations [P, B, C, H, W]: member p's output [B, O, H',
// W'] depends on its own input and weight row only, and so does its
// gradient. On CUDA it is one grouped convolution: the input viewed in the
// grouped layout [B, P*C, H, W] (to_grouped: member p's channels are
// p*C .. p*C+C-1), the weight [P, O, C, k, k] read as [P*O, C, k, k],
// groups = P. On the CPU it is each member's own convolution, one after
// another, on its contiguous [B, C, H, W].
//
// Each weight row is a torch::nn::Conv2d weight [O, C, k, k] as it stands,
// each bias row [O] Conv2d's bias; tensors() lists them in Conv2d's
// parameters() order (stacked_tensor.h). Fresh rows are drawn as Conv2d
// draws its own (uniform in +-1/sqrt(C*k*k)), not the same values: rows
// that must equal an individual's are loaded from it. Made
// InitialWeights::kUndrawn, the rows hold no values (nothing is drawn).
//
// Why not grouped on the CPU: LibTorch 1.13's oneDNN grouped convolution
// was measured 1.2 to 3.2 times slower than the members' convolutions one
// after another (4 members, batch 100, the dcgan layers, forward and
// backward), and with one input or output channel per member it takes
// kernels that depend on the number of groups, so a member's bits would
// depend on its stack. One after another,
// each member's output and gradients are its own Conv2d's to the bit
// (tests/nn/stacked_layers_test.cpp).
//
// Thread-safety: a module instance belongs to one thread at a time; the
// layout functions are pure.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "common/nn/initial_weights.h"
#include "common/nn/layers.h"
#include "common/nn/stacked_tensor.h"

namespace cellgan {

// [P, B, C, H, W] -> [B, P*C, H, W] (a copy) and back.
torch::Tensor to_grouped(const torch::Tensor& x);
torch::Tensor from_grouped(const torch::Tensor& x, std::int64_t members);

class StackedConv2dImpl : public torch::nn::Module {
 public:
  StackedConv2dImpl(std::int64_t members, Conv2dGeometry geometry, InitialWeights weights = InitialWeights::kDrawn);

  // x: [P, B, in, H, W] -> [P, B, out, H', W']; std::invalid_argument on
  // other sizes.
  torch::Tensor forward(const torch::Tensor& x) { return forward_with(x, weight); }
  // The same with `w` ([P, out, in, k, k], e.g. a spectrally normalised
  // weight) in place of the weight.
  torch::Tensor forward_with(const torch::Tensor& x, const torch::Tensor& w);
  // Member p's convolution on the CPU: its x [B, in, H, W] with its weight
  // row `w` [out, in, k, k] and bias row `b` [out] (rows the caller took by
  // unbind(), once per pass, so the backward pass stacks them once).
  torch::Tensor member_forward(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) const;

  // The weight, then the bias, each with its Conv2d sizes.
  std::vector<StackedTensor> tensors() const;

  std::int64_t members() const { return members_; }
  const Conv2dGeometry& geometry() const { return geometry_; }

  torch::Tensor weight;  // [P, out, in, k, k]
  torch::Tensor bias;    // [P, out]

 private:
  std::int64_t members_;
  Conv2dGeometry geometry_;
};
TORCH_MODULE(StackedConv2d);

}  // namespace cellgan
