// The networks' linear and convolutional layers (layers.h).
#include "common/nn/layers.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace cellgan {
namespace {

// LibTorch's reset_parameters() of Linear and Conv2d.
void draw_as_libtorch_does(torch::Tensor& weight, torch::Tensor& bias) {
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  const std::int64_t fan_in = weight.numel() / weight.size(0);
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  torch::nn::init::uniform_(bias, -bound, bound);
}

}  // namespace

LinearLayerImpl::LinearLayerImpl(std::int64_t in, std::int64_t out, InitialWeights weights)
    : in_(in), out_(out), weights_(weights) {
  reset();
}

void LinearLayerImpl::reset() {
  weight = register_parameter("weight", torch::empty({out_, in_}));
  bias = register_parameter("bias", torch::empty(out_));
  if (weights_ == InitialWeights::kDrawn) draw_as_libtorch_does(weight, bias);
}

torch::Tensor LinearLayerImpl::forward(const torch::Tensor& x) { return torch::linear(x, weight, bias); }

Conv2dLayerImpl::Conv2dLayerImpl(Conv2dGeometry geometry, InitialWeights weights)
    : geometry_(geometry), weights_(weights) {
  if (geometry_.in < 1 || geometry_.out < 1 || geometry_.kernel < 1 || geometry_.stride < 1 || geometry_.padding < 0)
    throw std::invalid_argument("Conv2dLayer: channels, kernel and stride must be >= 1, padding >= 0");
  reset();
}

void Conv2dLayerImpl::reset() {
  const Conv2dGeometry& g = geometry_;
  weight = register_parameter("weight", torch::empty({g.out, g.in, g.kernel, g.kernel}));
  bias = register_parameter("bias", torch::empty(g.out));
  if (weights_ == InitialWeights::kDrawn) draw_as_libtorch_does(weight, bias);
}

torch::Tensor Conv2dLayerImpl::forward(const torch::Tensor& x) { return forward_with(x, weight); }

torch::Tensor Conv2dLayerImpl::forward_with(const torch::Tensor& x, const torch::Tensor& w) const {
  return torch::conv2d(x, w, bias, {geometry_.stride, geometry_.stride}, {geometry_.padding, geometry_.padding});
}

}  // namespace cellgan
