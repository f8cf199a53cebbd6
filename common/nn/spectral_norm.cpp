// Spectral normalisation by power iteration and the SN layers (see
// spectral_norm.h).
//
// Thread-safety: see the header.
#include "common/nn/spectral_norm.h"

#include <torch/torch.h>

#include <stdexcept>

#include <torch/version.h>

namespace cellgan {
namespace {

constexpr double kNormEps = 1e-12;

torch::Tensor normalised(const torch::Tensor& v) { return v / v.norm().clamp_min(kNormEps); }

}  // namespace

SpectralNormImpl::SpectralNormImpl(std::int64_t rows, std::int64_t power_iterations)
    : rows_(rows), power_iterations_(power_iterations) {
  if (rows_ < 1 || power_iterations_ < 1)
    throw std::invalid_argument("SpectralNorm: rows and power_iterations must be >= 1");
  reset();
}

void SpectralNormImpl::reset() { u_ = register_buffer("u", normalised(torch::randn({rows_}))); }

torch::Tensor SpectralNormImpl::sigma(const torch::Tensor& weight) const {
  const torch::Tensor w = weight.reshape({rows_, -1});
  // A copy: a later forward's in-place update of u_ must not touch a graph
  // that still needs this u for its backward pass.
  return torch::mv(w.t(), u_.clone()).norm();
}

torch::Tensor SpectralNormImpl::forward(const torch::Tensor& weight) {
  if (weight.size(0) != rows_) throw std::invalid_argument("SpectralNorm::forward: the weight's rows differ from u's");
  if (is_training()) {
    torch::NoGradGuard no_grad;
    const torch::Tensor w = weight.detach().reshape({rows_, -1});
    torch::Tensor u = u_;
    for (std::int64_t i = 0; i < power_iterations_; ++i) u = normalised(torch::mv(w, normalised(torch::mv(w.t(), u))));
    u_.copy_(u);
  }
  return weight / sigma(weight);
}

SNLinearImpl::SNLinearImpl(std::int64_t in, std::int64_t out) : options_(in, out) { reset(); }

void SNLinearImpl::reset() {
  layer_ = register_module("layer", torch::nn::Linear(options_));
  sn_ = register_module("sn", SpectralNorm(options_.out_features()));
}

torch::Tensor SNLinearImpl::forward(const torch::Tensor& x) {
  return torch::nn::functional::linear(x, sn_->forward(layer_->weight), layer_->bias);
}

SNConv2dImpl::SNConv2dImpl(torch::nn::Conv2dOptions options) : options_(std::move(options)) {
  // The padding mode is a c10::variant up to LibTorch 1.x, a std::variant from 2.0.
#if TORCH_VERSION_MAJOR >= 2
  using std::holds_alternative;
#else
  using c10::holds_alternative;
#endif
  if (!holds_alternative<torch::enumtype::kZeros>(options_.padding_mode()))
    throw std::invalid_argument("SNConv2d: only zero padding is supported");
  reset();
}

void SNConv2dImpl::reset() {
  layer_ = register_module("layer", torch::nn::Conv2d(options_));
  sn_ = register_module("sn", SpectralNorm(options_.out_channels()));
}

torch::Tensor SNConv2dImpl::forward(const torch::Tensor& x) {
  namespace F = torch::nn::functional;
  const auto options = F::Conv2dFuncOptions()
                           .bias(layer_->bias)
                           .stride(options_.stride())
                           .padding(options_.padding())
                           .dilation(options_.dilation())
                           .groups(options_.groups());
  return F::conv2d(x, sn_->forward(layer_->weight), options);
}

}  // namespace cellgan
