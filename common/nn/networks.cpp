// Generator and discriminator networks (docs/configuration.md, "network"): builds the layer stacks
// that networks.h describes for the mlp, dcgan, sngan and toy kinds.
//
// Thread-safety: a module instance belongs to one thread at a time; the
// free functions are pure.
#include "common/nn/networks.h"

#include <torch/torch.h>

#include <fmt/core.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/nn/conditional_networks.h"
#include "common/nn/layers.h"
#include "common/nn/precision.h"
#include "common/nn/spectral_norm.h"

namespace cellgan {
namespace {

constexpr std::int64_t kMlpHidden = 256;
constexpr std::int64_t kMlpHiddenLayers = 2;
constexpr double kDropout = 0.3;
// DCGAN geometry for 28x28 images.
constexpr std::int64_t kSeedSide = 7;  // 7 -> 14 -> 28
constexpr std::int64_t kGenChannels = 128;
constexpr std::int64_t kGenMidChannels = 64;
constexpr std::int64_t kDiscChannels1 = 32;
constexpr std::int64_t kDiscChannels2 = 64;

torch::nn::LeakyReLU leaky() {
  return torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(kLeakySlope));
}

torch::nn::Upsample upsample_twice() {
  return torch::nn::Upsample(
      torch::nn::UpsampleOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest));
}

void check_shape(const NetworkShape& shape) {
  if (shape.latent_dim < 1 || shape.data_dim < 1 || shape.toy_hidden < 1 || shape.toy_layers < 1) {
    throw InputError(
        fmt::format("network: latent_dim, data_dim, toy_hidden and toy_layers must be >= 1 (got {}, {}, {}, {})",
                    shape.latent_dim, shape.data_dim, shape.toy_hidden, shape.toy_layers));
  }
  if (is_conditional(shape) && (shape.data_dim != kImageDim + kClassCount || shape.latent_dim <= kClassCount)) {
    throw InputError(fmt::format("network.kind: dcgan_conditional expects 28x28 images with 10 label slots (data_dim "
                                 "{}, latent_dim > {}), got data_dim {}, latent_dim {}",
                                 kImageDim + kClassCount, kClassCount, shape.data_dim, shape.latent_dim));
  }
  if ((shape.kind == NetworkKind::kDcgan || shape.kind == NetworkKind::kSngan) && shape.data_dim != kImageDim) {
    throw InputError(fmt::format("network.kind: {} expects 28x28 images (data_dim {}), got data_dim {}",
                                 to_string(shape.kind), kImageDim, shape.data_dim));
  }
}

// `layers` hidden layers of width `hidden` with LeakyReLU 0.2, then `out`.
torch::nn::Sequential hidden_mlp(const HiddenMlpWidths& widths, InitialWeights weights) {
  torch::nn::Sequential body;
  for (std::int64_t i = 0; i < widths.layers; ++i) {
    body->push_back(LinearLayer(i == 0 ? widths.in : widths.hidden, widths.hidden, weights));
    body->push_back(leaky());
  }
  body->push_back(LinearLayer(widths.hidden, widths.out, weights));
  return body;
}

torch::nn::Sequential dcgan_generator(const NetworkShape& shape, InitialWeights weights) {
  namespace nn = torch::nn;
  return nn::Sequential(
      LinearLayer(shape.latent_dim, kGenChannels * kSeedSide * kSeedSide, weights),
      nn::Unflatten(nn::UnflattenOptions(/*dim=*/1, {kGenChannels, kSeedSide, kSeedSide})),
      nn::BatchNorm2d(kGenChannels), nn::ReLU(), upsample_twice(),
      Conv2dLayer(Conv2dGeometry{kGenChannels, kGenMidChannels, /*kernel=*/3, /*stride=*/1, /*padding=*/1}, weights),
      nn::BatchNorm2d(kGenMidChannels), nn::ReLU(), upsample_twice(),
      Conv2dLayer(Conv2dGeometry{kGenMidChannels, 1, /*kernel=*/3, /*stride=*/1, /*padding=*/1}, weights), nn::Tanh(),
      nn::Flatten());
}

// (The layers are constructed, and draw their initial weights, in the
// unspecified order of a call's arguments: kept as it is, so that the
// weights a seed gives stay the same.)
torch::nn::Sequential dcgan_discriminator(InitialWeights weights) {
  namespace nn = torch::nn;
  return nn::Sequential(
      nn::Unflatten(nn::UnflattenOptions(/*dim=*/1, {1, kImageSide, kImageSide})),
      Conv2dLayer(halving(1, kDiscChannels1), weights), leaky(), nn::Dropout(kDropout),
      Conv2dLayer(halving(kDiscChannels1, kDiscChannels2), weights), nn::BatchNorm2d(kDiscChannels2), leaky(),
      nn::Dropout(kDropout), nn::Flatten(), LinearLayer(kDiscChannels2 * kSeedSide * kSeedSide, 1, weights));
}

// The same layers with LayerNorm for the BatchNorm: a critic normalises
// each sample on its own. Built layer by layer, in order.
torch::nn::Sequential dcgan_critic(InitialWeights weights) {
  namespace nn = torch::nn;
  nn::Sequential body;
  body->push_back(nn::Unflatten(nn::UnflattenOptions(/*dim=*/1, {1, kImageSide, kImageSide})));
  body->push_back(Conv2dLayer(halving(1, kDiscChannels1), weights));
  body->push_back(leaky());
  body->push_back(nn::Dropout(kDropout));
  body->push_back(Conv2dLayer(halving(kDiscChannels1, kDiscChannels2), weights));
  body->push_back(nn::LayerNorm(nn::LayerNormOptions({kDiscChannels2, kSeedSide, kSeedSide})));
  body->push_back(leaky());
  body->push_back(nn::Dropout(kDropout));
  body->push_back(nn::Flatten());
  body->push_back(LinearLayer(kDiscChannels2 * kSeedSide * kSeedSide, 1, weights));
  return body;
}

// The dcgan discriminator's convolutions, spectrally normalised, without
// BatchNorm and dropout. Built layer by layer, in order.
torch::nn::Sequential sngan_discriminator(InitialWeights weights) {
  namespace nn = torch::nn;
  nn::Sequential body;
  body->push_back(nn::Unflatten(nn::UnflattenOptions(/*dim=*/1, {1, kImageSide, kImageSide})));
  body->push_back(SNConv2d(halving(1, kDiscChannels1), weights));
  body->push_back(leaky());
  body->push_back(SNConv2d(halving(kDiscChannels1, kDiscChannels2), weights));
  body->push_back(leaky());
  body->push_back(nn::Flatten());
  body->push_back(SNLinear(kDiscChannels2 * kSeedSide * kSeedSide, 1, weights));
  return body;
}

// A caller's bug, not bad user input: std::invalid_argument.
void check_input(const torch::Tensor& t, std::int64_t width, const char* what) {
  if (t.dim() != 2 || t.size(1) != width) {
    std::string sizes;
    for (const auto s : t.sizes()) sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
    throw std::invalid_argument(fmt::format("{}: expected a [N, {}] tensor, got [{}]", what, width, sizes));
  }
}

}  // namespace

NetworkShape network_shape(const Config& config) {
  NetworkShape shape;
  shape.kind = config.network.kind;
  shape.d_output =
      config.training.loss == LossKind::kWganGp ? DiscriminatorOutput::kScore : DiscriminatorOutput::kProbability;
  shape.latent_dim = config.network.latent_dim;
  shape.toy_hidden = config.network.toy_hidden;
  shape.toy_layers = config.network.toy_layers;
  shape.data_dim = sample_dim(config.data.dataset);
  if (is_conditional(shape)) {  // the label slots (conditional_networks.h)
    shape.latent_dim += kClassCount;
    shape.data_dim += kClassCount;
  }
  return shape;
}

HiddenMlpWidths generator_mlp_widths(const NetworkShape& shape) {
  if (shape.kind == NetworkKind::kMlp) return {shape.latent_dim, kMlpHidden, kMlpHiddenLayers, shape.data_dim};
  if (shape.kind == NetworkKind::kToy) return {shape.latent_dim, shape.toy_hidden, shape.toy_layers, shape.data_dim};
  throw std::invalid_argument("generator_mlp_widths: network kind " + std::string(to_string(shape.kind)) +
                              " is not mlp or toy");
}

HiddenMlpWidths discriminator_mlp_widths(const NetworkShape& shape) {
  if (shape.kind == NetworkKind::kMlp) return {shape.data_dim, kMlpHidden, kMlpHiddenLayers, 1};
  if (shape.kind == NetworkKind::kToy) return {shape.data_dim, shape.toy_hidden, shape.toy_layers, 1};
  throw std::invalid_argument("discriminator_mlp_widths: network kind " + std::string(to_string(shape.kind)) +
                              " is not mlp or toy");
}

GeneratorImpl::GeneratorImpl(NetworkShape shape, InitialWeights weights) : shape_(shape), weights_(weights) {
  check_shape(shape_);
  reset();
}

void GeneratorImpl::reset() {
  switch (shape_.kind) {
    case NetworkKind::kMlp:
      body_ = hidden_mlp(generator_mlp_widths(shape_), weights_);
      body_->push_back(torch::nn::Tanh());
      break;
    case NetworkKind::kDcgan:
    case NetworkKind::kSngan:
      body_ = dcgan_generator(shape_, weights_);
      break;
    case NetworkKind::kDcganConditional:
      body_ = conditional_generator_body(shape_, weights_);
      break;
    case NetworkKind::kToy:
      body_ = hidden_mlp(generator_mlp_widths(shape_), weights_);
      break;
  }
  register_module("body", body_);
}

torch::Tensor GeneratorImpl::forward(const torch::Tensor& z) {
  check_input(z, shape_.latent_dim, "Generator::forward");
  if (is_conditional(shape_)) return conditional_generator_forward(body_, z, shape_);
  return body_->forward(z);
}

DiscriminatorImpl::DiscriminatorImpl(NetworkShape shape, InitialWeights weights)
    : shape_(shape), weights_(weights) {
  check_shape(shape_);
  reset();
}

void DiscriminatorImpl::reset() {
  switch (shape_.kind) {
    case NetworkKind::kMlp:
      body_ = hidden_mlp(discriminator_mlp_widths(shape_), weights_);
      break;
    case NetworkKind::kDcgan:
      body_ = shape_.d_output == DiscriminatorOutput::kScore ? dcgan_critic(weights_) : dcgan_discriminator(weights_);
      break;
    case NetworkKind::kSngan:
      body_ = sngan_discriminator(weights_);
      break;
    case NetworkKind::kDcganConditional:
      body_ = conditional_discriminator_body(weights_);
      break;
    case NetworkKind::kToy:
      body_ = hidden_mlp(discriminator_mlp_widths(shape_), weights_);
      break;
  }
  // The sigmoid in fp32 also under autocast: in 16 bits it rounds to 1 for
  // logits past about 6, where BCE on a fake then has no gradient.
  if (shape_.d_output == DiscriminatorOutput::kProbability)
    body_->push_back(torch::nn::Functional([](const torch::Tensor& t) { return torch::sigmoid(widened(t)); }));
  register_module("body", body_);
}

torch::Tensor DiscriminatorImpl::forward(const torch::Tensor& x) {
  check_input(x, shape_.data_dim, "Discriminator::forward");
  if (is_conditional(shape_)) return conditional_discriminator_forward(body_, x);
  return body_->forward(x);
}

std::int64_t parameter_count(const torch::nn::Module& module) {
  std::int64_t total = 0;
  for (const auto& p : module.parameters(/*recurse=*/true)) {
    if (p.requires_grad()) total += p.numel();
  }
  return total;
}

}  // namespace cellgan
