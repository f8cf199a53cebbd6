// The conditional DCGAN pair (see conditional_networks.h).
#include "common/nn/conditional_networks.h"

#include <torch/torch.h>

#include <stdexcept>

#include "common/nn/layers.h"

namespace cellgan {
namespace {

constexpr std::int64_t kChannels1 = 32;
constexpr std::int64_t kChannels2 = 64;
constexpr std::int64_t kQuarterSide = kImageSide / 4;  // 28 -> 14 -> 7
constexpr double kDropout = 0.3;

torch::nn::LeakyReLU leaky() {
  return torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(kLeakySlope));
}

torch::Tensor label_one_hot(const torch::Tensor& labels) {
  return torch::one_hot(labels, kClassCount).to(torch::kFloat32);
}

}  // namespace

torch::nn::Sequential conditional_generator_body(const NetworkShape& shape, InitialWeights weights) {
  // A DCGAN generator of the same latent width, fed [z, onehot(y)].
  NetworkShape inner = shape;
  inner.kind = NetworkKind::kDcgan;
  inner.data_dim = kImageDim;
  return torch::nn::Sequential(Generator(inner, weights));
}

torch::nn::Sequential conditional_discriminator_body(InitialWeights weights) {
  namespace nn = torch::nn;
  return nn::Sequential(
      nn::Unflatten(nn::UnflattenOptions(/*dim=*/1, {1 + kClassCount, kImageSide, kImageSide})),
      Conv2dLayer(halving(1 + kClassCount, kChannels1), weights), leaky(), nn::Dropout(kDropout),
      Conv2dLayer(halving(kChannels1, kChannels2), weights), nn::BatchNorm2d(kChannels2), leaky(),
      nn::Dropout(kDropout), nn::Flatten(), LinearLayer(kChannels2 * kQuarterSide * kQuarterSide, 1, weights));
}

torch::Tensor conditional_generator_forward(torch::nn::Sequential& body, const torch::Tensor& z,
                                            const NetworkShape& shape) {
  const std::int64_t free = shape.latent_dim - kClassCount;
  const torch::Tensor label = label_one_hot(latent_labels(z, shape));
  const torch::Tensor image = body->forward(torch::cat({z.narrow(1, 0, free), label}, 1));
  return torch::cat({image, label}, 1);
}

torch::Tensor conditional_discriminator_forward(torch::nn::Sequential& body, const torch::Tensor& x) {
  const std::int64_t n = x.size(0);
  const torch::Tensor image = x.narrow(1, 0, kImageDim).reshape({n, 1, kImageSide, kImageSide});
  const torch::Tensor planes =
      x.narrow(1, kImageDim, kClassCount).reshape({n, kClassCount, 1, 1}).expand({n, kClassCount, kImageSide, kImageSide});
  return body->forward(torch::cat({image, planes}, 1).flatten(1));
}

torch::Tensor image_part(const torch::Tensor& samples, const NetworkShape& shape) {
  return is_conditional(shape) ? samples.narrow(1, 0, kImageDim) : samples;
}

torch::Tensor latent_labels(const torch::Tensor& z, const NetworkShape& shape) {
  if (!is_conditional(shape)) throw std::invalid_argument("latent_labels: not a conditional generator");
  return z.narrow(1, shape.latent_dim - kClassCount, kClassCount).argmax(1);
}

void set_latent_label(torch::Tensor& z, const NetworkShape& shape, std::int64_t label) {
  if (!is_conditional(shape) || label < 0 || label >= kClassCount)
    throw std::invalid_argument("set_latent_label: a conditional generator and a label in 0..9");
  torch::Tensor slots = z.narrow(1, shape.latent_dim - kClassCount, kClassCount);
  slots.zero_();
  slots.select(1, label).fill_(1.0f);
}

}  // namespace cellgan
