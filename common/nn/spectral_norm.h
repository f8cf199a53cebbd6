// Spectral normalisation (Miyato et al., 2018) by power iteration, and the
// two layers the sngan discriminator is made of. LibTorch's C++ API has no
// spectral_norm utility, so this is ours.
//
// SpectralNorm holds, for a weight W with `rows` rows (the output features
// or channels; W is read as a rows x (everything else) matrix), the
// power-iteration vector u as a buffer named "u": it is saved, cloned,
// encoded and checkpointed with the module like any other buffer.
// forward(W) returns W / sigma, sigma = ||W^T u|| with u held constant, so
// the gradient reaching W is that of W / sigma(W) with dsigma/dW = u v^T,
// v = W^T u / ||W^T u||. In training mode forward() first runs
// `power_iterations` steps u <- normalise(W normalise(W^T u)) (no
// gradient), so sigma approaches W's largest singular value as training
// goes on; in evaluation mode u is left as it is, so forward draws nothing
// and changes nothing.
//
// u starts as a normalised N(0, 1) draw from Torch's global generator, like
// the layers' weights: seed it first for reproducible modules.
//
// SNLinear and SNConv2d are layers.h's LinearLayer and Conv2dLayer (LibTorch's
// Linear and Conv2d: same parameters, same initialisation), registered as
// the submodule "layer", whose weight passes through a SpectralNorm (the
// submodule "sn") on every forward. Made InitialWeights::kUndrawn, none of
// them draws: the weights and u hold no values, for a caller that writes
// them all.
//
// Thread-safety: a module instance belongs to one thread at a time.
#pragma once

#include <torch/nn.h>

#include <cstdint>

#include "common/nn/initial_weights.h"
#include "common/nn/layers.h"

namespace cellgan {

class SpectralNormImpl : public torch::nn::Cloneable<SpectralNormImpl> {
 public:
  explicit SpectralNormImpl(std::int64_t rows, std::int64_t power_iterations = 1,
                            InitialWeights weights = InitialWeights::kDrawn);
  void reset() override;
  // W / sigma(W); updates u first in training mode.
  torch::Tensor forward(const torch::Tensor& weight);
  // The current estimate of W's largest singular value, ||W^T u||, with
  // gradient to W; updates nothing.
  torch::Tensor sigma(const torch::Tensor& weight) const;
  const torch::Tensor& u() const { return u_; }

 private:
  std::int64_t rows_;
  std::int64_t power_iterations_;
  InitialWeights weights_;
  torch::Tensor u_;
};
TORCH_MODULE(SpectralNorm);

class SNLinearImpl : public torch::nn::Cloneable<SNLinearImpl> {
 public:
  SNLinearImpl(std::int64_t in, std::int64_t out, InitialWeights weights = InitialWeights::kDrawn);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);
  LinearLayer& layer() { return layer_; }
  SpectralNorm& sn() { return sn_; }

 private:
  std::int64_t in_, out_;
  InitialWeights weights_;
  LinearLayer layer_{nullptr};
  SpectralNorm sn_{nullptr};
};
TORCH_MODULE(SNLinear);

class SNConv2dImpl : public torch::nn::Cloneable<SNConv2dImpl> {
 public:
  explicit SNConv2dImpl(Conv2dGeometry geometry, InitialWeights weights = InitialWeights::kDrawn);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);
  Conv2dLayer& layer() { return layer_; }
  SpectralNorm& sn() { return sn_; }

 private:
  Conv2dGeometry geometry_;
  InitialWeights weights_;
  Conv2dLayer layer_{nullptr};
  SpectralNorm sn_{nullptr};
};
TORCH_MODULE(SNConv2d);

}  // namespace cellgan
