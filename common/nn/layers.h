// The linear and convolutional layers of the networks (networks.h): LibTorch's
// Linear and Conv2d with the same parameters ("weight", "bias"), drawn as
// their reset_parameters() draws them (kaiming-uniform weight, a = sqrt(5);
// bias uniform in +-1/sqrt(fan_in), weight before bias) and the same forward,
// which can also be made without drawing (InitialWeights::kUndrawn: the
// parameters hold no values, for a caller that writes them all).
//
// Thread-safety: a module instance belongs to one thread at a time.
#pragma once

#include <torch/nn.h>

#include <cstdint>

#include "common/nn/initial_weights.h"

namespace cellgan {

class LinearLayerImpl : public torch::nn::Cloneable<LinearLayerImpl> {
 public:
  LinearLayerImpl(std::int64_t in, std::int64_t out, InitialWeights weights = InitialWeights::kDrawn);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);  // x W^T + b

  torch::Tensor weight;  // [out, in]
  torch::Tensor bias;    // [out]

 private:
  std::int64_t in_, out_;
  InitialWeights weights_;
};
TORCH_MODULE(LinearLayer);

// A convolution's channels, and its square kernel with the same stride and
// zero padding on both sides (here and in stacked_conv.h).
struct Conv2dGeometry {
  std::int64_t in = 0;  // channels
  std::int64_t out = 0;
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
};

// A 4x4 kernel, stride 2, padding 1: halves an even side (28 -> 14 -> 7).
inline Conv2dGeometry halving(std::int64_t in, std::int64_t out) {
  return Conv2dGeometry{in, out, /*kernel=*/4, /*stride=*/2, /*padding=*/1};
}

class Conv2dLayerImpl : public torch::nn::Cloneable<Conv2dLayerImpl> {
 public:
  explicit Conv2dLayerImpl(Conv2dGeometry geometry, InitialWeights weights = InitialWeights::kDrawn);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);  // [N, in, H, W] -> [N, out, H', W']
  // The same convolution with another weight of the same shape (the
  // spectrally normalised one, spectral_norm.h).
  torch::Tensor forward_with(const torch::Tensor& x, const torch::Tensor& w) const;
  const Conv2dGeometry& geometry() const { return geometry_; }

  torch::Tensor weight;  // [out, in, kernel, kernel]
  torch::Tensor bias;    // [out]

 private:
  Conv2dGeometry geometry_;
  InitialWeights weights_;
};
TORCH_MODULE(Conv2dLayer);

}  // namespace cellgan
