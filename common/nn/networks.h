// Generator and discriminator networks (docs/configuration.md, "network"), in the LibTorch idiom:
// an Impl class plus TORCH_MODULE, layers registered in reset().
//
// Shapes (flat data, data_dim = 784 for 28x28 images, 2 for toy data):
// - mlp: G  z(latent) -> 256 -> LReLU .2 -> 256 -> LReLU .2 -> 784 -> Tanh
//           (283,920 parameters with latent 64)
//        D  784 -> 256 -> LReLU .2 -> 256 -> LReLU .2 -> 1 -> Sigmoid
//           (267,009 parameters)
// - dcgan: G  z -> Linear 128*7*7 -> BN -> ReLU -> Upsample x2 -> Conv 128->64 k3
//             -> BN -> ReLU -> Upsample x2 -> Conv 64->1 k3 -> Tanh -> flatten
//          D  unflatten 1x28x28 -> Conv 1->32 k4 s2 -> LReLU .2 -> Dropout .3
//             -> Conv 32->64 k4 s2 -> BN -> LReLU .2 -> Dropout .3 -> flatten
//             -> Linear -> Sigmoid
// - sngan: G  as dcgan
//          D  unflatten 1x28x28 -> SNConv 1->32 k4 s2 -> LReLU .2
//             -> SNConv 32->64 k4 s2 -> LReLU .2 -> flatten -> SNLinear -> Sigmoid
//             (SN: spectrally normalised, spectral_norm.h; no BN, no dropout)
// - toy:  G  z -> [h -> LReLU .2] x L -> 2 (linear output)
//         D  2 -> [h -> LReLU .2] x L -> 1 -> Sigmoid
//         (h = toy_hidden, L = toy_layers, 2 by default)
// G outputs [N, data_dim]; D takes [N, data_dim] and outputs [N, 1]
// probabilities in (0, 1), the Sigmoid taken in fp32 also under autocast
// (the stacked networks' too). A critic (d_output kScore, for loss wgan_gp)
// outputs raw scores instead: the same D without its final Sigmoid, and in
// dcgan with LayerNorm over 64x7x7 in place of the BatchNorm, so that the
// gradient penalty, taken per sample, does not mix the samples of a batch.
//
// Thread-safety: a module instance belongs to one thread at a time.
#pragma once

#include <torch/nn.h>

#include "common/config.h"
#include "common/nn/initial_weights.h"

namespace cellgan {

// What a discriminator outputs: probabilities (bce, mse, heuristic,
// mustangs) or a critic's raw scores (wgan_gp).
enum class DiscriminatorOutput { kProbability, kScore };

struct NetworkShape {
  NetworkKind kind = NetworkKind::kMlp;
  DiscriminatorOutput d_output = DiscriminatorOutput::kProbability;  // generators ignore it
  std::int64_t latent_dim = 64;
  std::int64_t data_dim = 784;
  std::int64_t toy_hidden = 64;
  std::int64_t toy_layers = 2;
};

// The shape a configuration implies (data_dim from the dataset kind,
// d_output from training.loss).
NetworkShape network_shape(const Config& config);

class GeneratorImpl : public torch::nn::Cloneable<GeneratorImpl> {
 public:
  explicit GeneratorImpl(NetworkShape shape, InitialWeights weights = InitialWeights::kDrawn);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& z);
  const NetworkShape& shape() const { return shape_; }

 private:
  NetworkShape shape_;
  InitialWeights weights_;
  torch::nn::Sequential body_{nullptr};
};
TORCH_MODULE(Generator);

class DiscriminatorImpl : public torch::nn::Cloneable<DiscriminatorImpl> {
 public:
  explicit DiscriminatorImpl(NetworkShape shape, InitialWeights weights = InitialWeights::kDrawn);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);
  const NetworkShape& shape() const { return shape_; }

 private:
  NetworkShape shape_;
  InitialWeights weights_;
  torch::nn::Sequential body_{nullptr};
};
TORCH_MODULE(Discriminator);

// The layers of the mlp and toy kinds' bodies: `layers` hidden layers of
// width `hidden`, each a Linear then LeakyReLU(kLeakySlope), then a Linear to
// `out` (the generator's mlp adds Tanh, a probability discriminator
// Sigmoid). The stacked networks (stacked_networks.h) build the same.
constexpr double kLeakySlope = 0.2;
struct HiddenMlpWidths {
  std::int64_t in = 0;
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t out = 0;
};
// For shape.kind mlp or toy only (std::invalid_argument otherwise).
HiddenMlpWidths generator_mlp_widths(const NetworkShape& shape);
HiddenMlpWidths discriminator_mlp_widths(const NetworkShape& shape);

// Number of trainable parameters.
std::int64_t parameter_count(const torch::nn::Module& module);

}  // namespace cellgan
