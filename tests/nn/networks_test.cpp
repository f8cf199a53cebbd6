// Tests of common/nn/networks: parameter counts of Lipizzaner's MLP pair,
// output shapes and ranges of every kind, sngan and the critics (wgan_gp),
// and independent clones.
#include "common/nn/networks.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/nn/conditional_networks.h"
#include "common/nn/layers.h"

namespace cellgan {
namespace {

NetworkShape shape_of(NetworkKind kind, std::int64_t data_dim) {
  NetworkShape shape;
  shape.kind = kind;
  shape.latent_dim = 64;
  shape.data_dim = data_dim;
  shape.toy_hidden = 32;
  return shape;
}

TEST(NetworksTest, MlpPairHasLipizzanersParameterCounts) {
  const auto shape = shape_of(NetworkKind::kMlp, 784);
  Generator g(shape);
  Discriminator d(shape);
  EXPECT_EQ(parameter_count(*g), 283920);
  EXPECT_EQ(parameter_count(*d), 267009);
}

// Toy MLPs: h = toy_hidden, L = toy_layers hidden layers of width h.
// G: (latent+1)h + (L-1)(h+1)h + (h+1)2;  D: 3h + (L-1)(h+1)h + (h+1).
// The mlp and toy kinds' linear layers draw as LibTorch's own, in order (so
// runs keep their initial weights).
TEST(NetworksTest, MlpLayersDrawAsLibTorchsLinear) {
  for (const auto& [kind, dim] : {std::pair{NetworkKind::kMlp, 784}, std::pair{NetworkKind::kToy, 2}}) {
    const NetworkShape shape = shape_of(kind, dim);
    torch::manual_seed(7);
    Discriminator d(shape);
    torch::manual_seed(7);
    std::vector<torch::Tensor> reference;
    const std::int64_t width = kind == NetworkKind::kMlp ? 256 : shape.toy_hidden;  // two hidden layers each
    for (const auto& [in, out] : {std::pair<std::int64_t, std::int64_t>{dim, width}, {width, width}, {width, 1}}) {
      torch::nn::Linear layer(in, out);
      reference.push_back(layer->weight.detach().clone());
      reference.push_back(layer->bias.detach().clone());
    }
    const std::vector<torch::Tensor> drawn = d->parameters();
    ASSERT_EQ(drawn.size(), reference.size());
    for (std::size_t i = 0; i < drawn.size(); ++i) EXPECT_TRUE(torch::equal(drawn[i], reference[i])) << i;
  }
}

// Every network's linear and convolutional layers (layers.h) draw as
// LibTorch's Linear and Conv2d draw theirs and compute what they compute,
// to the bit.
TEST(NetworksTest, LinearAndConvolutionLayersDrawAndComputeAsLibTorchsOwn) {
  torch::manual_seed(3);
  LinearLayer linear(50, 7);
  torch::manual_seed(3);
  torch::nn::Linear reference_linear(50, 7);
  EXPECT_TRUE(torch::equal(linear->weight, reference_linear->weight));
  EXPECT_TRUE(torch::equal(linear->bias, reference_linear->bias));
  const torch::Tensor x = torch::randn({6, 50});
  EXPECT_TRUE(torch::equal(linear->forward(x), reference_linear->forward(x)));
  for (const Conv2dGeometry g : {Conv2dGeometry{1, 32, 4, 2, 1}, Conv2dGeometry{128, 64, 3, 1, 1}, halving(11, 32)}) {
    SCOPED_TRACE(std::to_string(g.in) + " -> " + std::to_string(g.out));
    torch::manual_seed(4);
    Conv2dLayer conv(g);
    torch::manual_seed(4);
    torch::nn::Conv2d reference(torch::nn::Conv2dOptions(g.in, g.out, g.kernel).stride(g.stride).padding(g.padding));
    EXPECT_TRUE(torch::equal(conv->weight, reference->weight));
    EXPECT_TRUE(torch::equal(conv->bias, reference->bias));
    const torch::Tensor image = torch::randn({3, g.in, 14, 14});
    EXPECT_TRUE(torch::equal(conv->forward(image), reference->forward(image)));
  }
}

// Every kind made undrawn leaves Torch's global generator as it was, with
// the drawn network's parameters and buffers, by name and size.
TEST(NetworksTest, EveryKindMadeUndrawnDrawsNothing) {
  NetworkShape critic = shape_of(NetworkKind::kDcgan, 784);
  critic.d_output = DiscriminatorOutput::kScore;
  NetworkShape conditional = shape_of(NetworkKind::kDcganConditional, 784 + kClassCount);
  for (const NetworkShape& shape : {shape_of(NetworkKind::kMlp, 784), shape_of(NetworkKind::kToy, 2),
                                    shape_of(NetworkKind::kDcgan, 784), critic, shape_of(NetworkKind::kSngan, 784),
                                    conditional}) {
    SCOPED_TRACE(std::string(to_string(shape.kind)) + (shape.d_output == DiscriminatorOutput::kScore ? " critic" : ""));
    torch::manual_seed(11);
    const torch::Tensor expected = torch::rand({4});
    torch::manual_seed(11);
    Generator g(shape, InitialWeights::kUndrawn);
    Discriminator d(shape, InitialWeights::kUndrawn);
    EXPECT_TRUE(torch::equal(torch::rand({4}), expected)) << "the global generator was drawn from";
    const auto sizes = [](const torch::OrderedDict<std::string, torch::Tensor>& tensors) {
      std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
      for (const auto& item : tensors) out.emplace_back(item.key(), item.value().sizes().vec());
      return out;
    };
    const Generator drawn_g(shape);
    const Discriminator drawn_d(shape);
    EXPECT_EQ(sizes(g->named_parameters()), sizes(drawn_g->named_parameters()));
    EXPECT_EQ(sizes(g->named_buffers()), sizes(drawn_g->named_buffers()));
    EXPECT_EQ(sizes(d->named_parameters()), sizes(drawn_d->named_parameters()));
    EXPECT_EQ(sizes(d->named_buffers()), sizes(drawn_d->named_buffers()));
  }
}

TEST(NetworksTest, ToyDepthFollowsToyLayers) {
  auto shape = shape_of(NetworkKind::kToy, 2);
  shape.latent_dim = 2;
  shape.toy_hidden = 10;
  for (const std::int64_t layers : {1, 2, 4}) {
    SCOPED_TRACE(layers);
    shape.toy_layers = layers;
    Generator g(shape);
    Discriminator d(shape);
    EXPECT_EQ(parameter_count(*g), 30 + (layers - 1) * 110 + 22);
    EXPECT_EQ(parameter_count(*d), 30 + (layers - 1) * 110 + 11);
  }
}

TEST(NetworksTest, ShapeFollowsTheDataset) {
  Config config;
  config.network.kind = NetworkKind::kToy;
  config.network.latent_dim = 8;
  config.network.toy_hidden = 16;
  config.network.toy_layers = 3;
  config.data.dataset = DatasetKind::kRing;
  auto shape = network_shape(config);
  EXPECT_EQ(shape.kind, NetworkKind::kToy);
  EXPECT_EQ(shape.latent_dim, 8);
  EXPECT_EQ(shape.toy_hidden, 16);
  EXPECT_EQ(shape.toy_layers, 3);
  EXPECT_EQ(shape.data_dim, 2);
  config.data.dataset = DatasetKind::kGrid;
  EXPECT_EQ(network_shape(config).data_dim, 2);
  for (auto dataset : {DatasetKind::kMnist, DatasetKind::kFashion, DatasetKind::kIdx}) {
    config.data.dataset = dataset;
    EXPECT_EQ(network_shape(config).data_dim, 784);
  }
}

// Runs G and D of one kind in training and evaluation mode and checks
// shapes and output ranges.
void check_kind(NetworkKind kind, std::int64_t data_dim, bool tanh_output) {
  SCOPED_TRACE(to_string(kind));
  torch::manual_seed(7);
  const auto shape = shape_of(kind, data_dim);
  Generator g(shape);
  Discriminator d(shape);
  constexpr std::int64_t kBatch = 16;
  for (const bool training : {true, false}) {
    g->train(training);
    d->train(training);
    const auto z = torch::randn({kBatch, shape.latent_dim});
    const auto x = g->forward(z);
    ASSERT_EQ(x.sizes(), (std::vector<std::int64_t>{kBatch, data_dim}));
    EXPECT_TRUE(torch::isfinite(x).all().item<bool>());
    if (tanh_output) {
      EXPECT_GE(x.min().item<float>(), -1.0f);
      EXPECT_LE(x.max().item<float>(), 1.0f);
    }
    // Real-looking input and generated input both give probabilities.
    for (const auto& input : {x.detach(), torch::rand({kBatch, data_dim}) * 2 - 1}) {
      const auto p = d->forward(input);
      ASSERT_EQ(p.sizes(), (std::vector<std::int64_t>{kBatch, 1}));
      EXPECT_GT(p.min().item<float>(), 0.0f);
      EXPECT_LT(p.max().item<float>(), 1.0f);
    }
  }
  // Gradients flow from D's output back into G's parameters.
  g->train();
  d->train();
  d->forward(g->forward(torch::randn({kBatch, shape.latent_dim}))).mean().backward();
  for (const auto& p : g->parameters()) {
    ASSERT_TRUE(p.grad().defined());
  }
}

TEST(NetworksTest, MlpShapesAndRanges) { check_kind(NetworkKind::kMlp, 784, /*tanh_output=*/true); }
TEST(NetworksTest, DcganShapesAndRanges) { check_kind(NetworkKind::kDcgan, 784, /*tanh_output=*/true); }
TEST(NetworksTest, ToyShapesAndRanges) { check_kind(NetworkKind::kToy, 2, /*tanh_output=*/false); }
TEST(NetworksTest, SnganShapesAndRanges) { check_kind(NetworkKind::kSngan, 784, /*tanh_output=*/true); }

TEST(NetworksTest, SnganIsTheDcganPairWithSpectralNormsForBatchNorm) {
  const auto dcgan = shape_of(NetworkKind::kDcgan, 784);
  const auto sngan = shape_of(NetworkKind::kSngan, 784);
  EXPECT_EQ(parameter_count(*Generator(sngan)), parameter_count(*Generator(dcgan)));
  // The same convolutions and linear layer, without BatchNorm's 2 x 64.
  Discriminator d(sngan);
  EXPECT_EQ(parameter_count(*d), parameter_count(*Discriminator(dcgan)) - 2 * 64);
  // One u per normalised layer: 32 and 64 channels, 1 output.
  std::vector<std::int64_t> u_sizes;
  for (const auto& b : d->named_buffers()) {
    EXPECT_NE(b.key().find("sn.u"), std::string::npos) << b.key();
    u_sizes.push_back(b.value().numel());
  }
  EXPECT_EQ(u_sizes, (std::vector<std::int64_t>{32, 64, 1}));
}

TEST(NetworksTest, ACriticIsTheDiscriminatorWithoutItsSigmoid) {
  for (const auto kind : {NetworkKind::kMlp, NetworkKind::kSngan, NetworkKind::kToy}) {
    SCOPED_TRACE(to_string(kind));
    auto shape = shape_of(kind, kind == NetworkKind::kToy ? 2 : 784);
    torch::manual_seed(21);
    Discriminator d(shape);
    shape.d_output = DiscriminatorOutput::kScore;
    torch::manual_seed(21);
    Discriminator critic(shape);
    d->eval();
    critic->eval();
    torch::NoGradGuard no_grad;
    const auto x = torch::randn({32, shape.data_dim}) * 3;
    const auto scores = critic->forward(x);
    EXPECT_TRUE(torch::allclose(torch::sigmoid(scores), d->forward(x)));
    // Raw scores: scaled weights take them out of (0, 1).
    for (auto& p : critic->parameters()) p.mul_(4.0);
    const auto scaled = critic->forward(x);
    EXPECT_TRUE((scaled < 0).any().item<bool>() || (scaled > 1).any().item<bool>());
  }
}

TEST(NetworksTest, TheDcganCriticNormalisesEachSampleOnItsOwn) {
  auto shape = shape_of(NetworkKind::kDcgan, 784);
  shape.d_output = DiscriminatorOutput::kScore;
  torch::manual_seed(22);
  Discriminator critic(shape);
  EXPECT_TRUE(critic->named_buffers().is_empty());  // no BatchNorm statistics
  // LayerNorm over 64x7x7 (weight and bias) for BatchNorm's 2 x 64.
  EXPECT_EQ(parameter_count(*critic), parameter_count(*Discriminator(shape_of(NetworkKind::kDcgan, 784))) - 2 * 64 +
                                          2 * 64 * 7 * 7);
  critic->eval();  // no dropout
  torch::NoGradGuard no_grad;
  const auto x = torch::rand({8, 784}) * 2 - 1;
  EXPECT_TRUE(torch::allclose(critic->forward(x).narrow(0, 0, 1), critic->forward(x.narrow(0, 0, 1)), 1e-5, 1e-6));
}

TEST(NetworksTest, TheShapeOfWganGpHasACritic) {
  Config config;
  EXPECT_EQ(network_shape(config).d_output, DiscriminatorOutput::kProbability);
  config.training.loss = LossKind::kWganGp;
  EXPECT_EQ(network_shape(config).d_output, DiscriminatorOutput::kScore);
}

TEST(NetworksTest, ToyGeneratorOutputIsLinear) {
  // The toy generator must be able to reach the grid's modes at +-4, so
  // its output is not squashed: scaling its last layer scales the output.
  torch::manual_seed(3);
  Generator g(shape_of(NetworkKind::kToy, 2));
  const auto z = torch::randn({64, 64});
  torch::NoGradGuard no_grad;
  auto params = g->parameters();
  for (auto& p : params) p.mul_(10.0);
  EXPECT_GT(g->forward(z).abs().max().item<float>(), 1.0f);
}

TEST(NetworksTest, DcganNeedsImages) {
  EXPECT_THROW(Generator(shape_of(NetworkKind::kDcgan, 2)), InputError);
  EXPECT_THROW(Discriminator(shape_of(NetworkKind::kDcgan, 2)), InputError);
  EXPECT_THROW(Discriminator(shape_of(NetworkKind::kSngan, 2)), InputError);
}

TEST(NetworksTest, WrongInputWidthIsRejected) {
  Generator g(shape_of(NetworkKind::kMlp, 784));
  Discriminator d(shape_of(NetworkKind::kMlp, 784));
  EXPECT_THROW(g->forward(torch::randn({4, 10})), std::invalid_argument);
  EXPECT_THROW(d->forward(torch::randn({4, 2})), std::invalid_argument);
}

template <typename Holder, typename Impl>
void check_clone(Holder original, const torch::Tensor& input) {
  auto copy = std::dynamic_pointer_cast<Impl>(original->clone());
  ASSERT_TRUE(copy);
  original->eval();
  copy->eval();
  torch::NoGradGuard no_grad;
  // Equal: same parameters, buffers and outputs.
  const auto params = original->named_parameters();
  const auto copied = copy->named_parameters();
  ASSERT_EQ(params.size(), copied.size());
  for (const auto& item : params) {
    EXPECT_TRUE(torch::equal(item.value(), copied[item.key()])) << item.key();
    EXPECT_NE(item.value().data_ptr(), copied[item.key()].data_ptr()) << item.key();
  }
  for (const auto& item : original->named_buffers()) {
    EXPECT_TRUE(torch::equal(item.value(), copy->named_buffers()[item.key()])) << item.key();
  }
  const auto before = original->forward(input);
  EXPECT_TRUE(torch::equal(before, copy->forward(input)));
  // Independent: changing the copy leaves the original as it was.
  for (auto& p : copy->parameters()) p.add_(0.5);
  EXPECT_TRUE(torch::equal(before, original->forward(input)));
  EXPECT_FALSE(torch::equal(before, copy->forward(input)));
}

TEST(NetworksTest, CloneIsEqualButIndependent) {
  torch::manual_seed(11);
  for (const auto kind : {NetworkKind::kMlp, NetworkKind::kDcgan, NetworkKind::kToy, NetworkKind::kSngan}) {
    SCOPED_TRACE(to_string(kind));
    const auto shape = shape_of(kind, kind == NetworkKind::kToy ? 2 : 784);
    Generator g(shape);
    Discriminator d(shape);
    // Train briefly so batch-norm running statistics differ from their defaults.
    g->forward(torch::randn({8, shape.latent_dim}));
    d->forward(torch::rand({8, shape.data_dim}));
    check_clone<Generator, GeneratorImpl>(g, torch::randn({8, shape.latent_dim}));
    check_clone<Discriminator, DiscriminatorImpl>(d, torch::rand({8, shape.data_dim}) * 2 - 1);
  }
}

}  // namespace
}  // namespace cellgan
