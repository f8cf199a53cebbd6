// Spectral normalisation by power iteration and the SN layers (see
// spectral_norm.h).
//
// Thread-safety: see the header.
#include "common/nn/spectral_norm.h"

#include <torch/torch.h>

#include <stdexcept>

#include "common/nn/precision.h"

namespace cellgan {
namespace {

constexpr double kNormEps = 1e-12;

torch::Tensor normalised(const torch::Tensor& v) { return v / v.norm().clamp_min(kNormEps); }

}  // namespace

SpectralNormImpl::SpectralNormImpl(std::int64_t rows, std::int64_t power_iterations, InitialWeights weights)
    : rows_(rows), power_iterations_(power_iterations), weights_(weights) {
  if (rows_ < 1 || power_iterations_ < 1)
    throw std::invalid_argument("SpectralNorm: rows and power_iterations must be >= 1");
  reset();
}

void SpectralNormImpl::reset() {
  const bool drawn = weights_ == InitialWeights::kDrawn;
  u_ = register_buffer("u", drawn ? normalised(torch::randn({rows_})) : torch::empty(rows_));
}

torch::Tensor SpectralNormImpl::sigma(const torch::Tensor& weight) const {
  const torch::Tensor w = weight.reshape({rows_, -1});
  // A copy: a later forward's in-place update of u_ must not touch a graph
  // that still needs this u for its backward pass.
  return torch::mv(w.t(), u_.clone()).norm();
}

torch::Tensor SpectralNormImpl::forward(const torch::Tensor& weight) {
  if (weight.size(0) != rows_) throw std::invalid_argument("SpectralNorm::forward: the weight's rows differ from u's");
  const NoAutocast fp32;  // u and sigma in fp32 (a GPU's mv would autocast)
  if (is_training()) {
    torch::NoGradGuard no_grad;
    const torch::Tensor w = weight.detach().reshape({rows_, -1});
    torch::Tensor u = u_;
    for (std::int64_t i = 0; i < power_iterations_; ++i) u = normalised(torch::mv(w, normalised(torch::mv(w.t(), u))));
    u_.copy_(u);
  }
  return weight / sigma(weight);
}

SNLinearImpl::SNLinearImpl(std::int64_t in, std::int64_t out, InitialWeights weights)
    : in_(in), out_(out), weights_(weights) {
  reset();
}

void SNLinearImpl::reset() {
  layer_ = register_module("layer", LinearLayer(in_, out_, weights_));
  sn_ = register_module("sn", SpectralNorm(out_, /*power_iterations=*/1, weights_));
}

torch::Tensor SNLinearImpl::forward(const torch::Tensor& x) {
  return torch::linear(x, sn_->forward(layer_->weight), layer_->bias);
}

SNConv2dImpl::SNConv2dImpl(Conv2dGeometry geometry, InitialWeights weights)
    : geometry_(geometry), weights_(weights) {
  reset();
}

void SNConv2dImpl::reset() {
  layer_ = register_module("layer", Conv2dLayer(geometry_, weights_));
  sn_ = register_module("sn", SpectralNorm(geometry_.out, /*power_iterations=*/1, weights_));
}

torch::Tensor SNConv2dImpl::forward(const torch::Tensor& x) {
  return layer_->forward_with(x, sn_->forward(layer_->weight));
}

}  // namespace cellgan
