// Spectral normalisation for P members at once (docs/architecture.md,
// "Stacked networks"): SpectralNorm of spectral_norm.h per member, with
// the power-iteration vectors u as one stacked buffer [P, rows].
//
// forward(W) takes the weights of P members [P, rows, ...] (each read as
// a rows x (everything else) matrix) and returns each member's W / sigma,
// sigma = ||W^T u|| with u held constant (the gradient SpectralNorm gives).
// In training mode it first runs one power iteration for every member at
// once, u <- normalise(W normalise(W^T u)), as two batched products (bmm)
// without gradient; in evaluation mode u is left as it is.
//
// Batched products and per-row norms sum in another order than
// SpectralNorm's matrix-vector products and whole-vector norms: a member's
// u and sigma agree with its own SpectralNorm's to a few units in the last
// place, not to the bit (tests/nn/stacked_layers_test.cpp).
//
// buffer_tensors() lists u as rows [rows] (SpectralNorm's buffer "u").
// Fresh rows are normalised N(0, 1) draws from Torch's global generator.
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

class StackedSpectralNormImpl : public torch::nn::Module {
 public:
  // u drawn as SpectralNorm draws it, or, kUndrawn, holding no values.
  StackedSpectralNormImpl(std::int64_t members, std::int64_t rows, InitialWeights weights = InitialWeights::kDrawn);

  // weight: [P, rows, ...] -> W / sigma per member, the same sizes.
  torch::Tensor forward(const torch::Tensor& weight);
  // [P]: each member's ||W^T u||, with gradient to W; updates nothing.
  torch::Tensor sigma(const torch::Tensor& weight) const;

  std::vector<StackedTensor> buffer_tensors() const;

  torch::Tensor u;  // [P, rows]

 private:
  torch::Tensor matrices(const torch::Tensor& weight) const;

  std::int64_t members_;
  std::int64_t rows_;
};
TORCH_MODULE(StackedSpectralNorm);

}  // namespace cellgan
