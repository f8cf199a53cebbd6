// The conditional DCGAN pair (conditional_networks.h): the label slots of
// G's latent choose its class, G appends that one-hot to its image, D sees
// the label, sampling keeps the image only, and a conditional ensemble
// samples one class or reports the classes it drew.
#include "common/nn/conditional_networks.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>

#include "common/idx.h"
#include "common/nn/class_generator.h"
#include "common/nn/individual.h"
#include "common/nn/training_data.h"
#include "tests/nn/synthetic_images.h"

namespace cellgan {
namespace {

Config conditional_config() {
  Config c;
  c.network.kind = NetworkKind::kDcganConditional;
  c.network.latent_dim = 16;
  return c;
}

TEST(ConditionalNetworks, TheShapeHasTenLabelSlotsInAndOut) {
  const NetworkShape s = network_shape(conditional_config());
  EXPECT_EQ(s.latent_dim, 26);
  EXPECT_EQ(s.data_dim, 794);
  Config plain = conditional_config();
  plain.network.kind = NetworkKind::kDcgan;
  EXPECT_EQ(network_shape(plain).data_dim, 784);
}

TEST(ConditionalNetworks, TheLatentLabelSlotsChooseTheClassThatGAppends) {
  torch::manual_seed(1);
  const NetworkShape s = network_shape(conditional_config());
  Generator g(s);
  g->eval();
  torch::Tensor z = torch::randn({40, s.latent_dim});
  const torch::Tensor out = g->forward(z);
  ASSERT_EQ(out.sizes(), (std::vector<std::int64_t>{40, 794}));
  const torch::Tensor drawn = latent_labels(z, s);
  EXPECT_TRUE(torch::equal(out.narrow(1, 784, 10).argmax(1), drawn));
  EXPECT_TRUE(torch::equal(out.narrow(1, 784, 10).sum(1), torch::ones({40})));
  // Random slots give several classes; set slots give the one asked for.
  EXPECT_GT(std::get<0>(torch::_unique(drawn)).numel(), 3);
  torch::Tensor fixed = z.clone();
  set_latent_label(fixed, s, 7);
  EXPECT_TRUE(torch::equal(latent_labels(fixed, s), torch::full({40}, 7, torch::kLong)));
  const torch::Tensor out7 = g->forward(fixed);
  EXPECT_TRUE(torch::equal(out7.narrow(1, 784, 10).argmax(1), torch::full({40}, 7, torch::kLong)));
  // The same free latent with another label gives another image: G sees the label.
  torch::Tensor fixed2 = z.clone();
  set_latent_label(fixed2, s, 2);
  EXPECT_FALSE(torch::allclose(g->forward(fixed2).narrow(1, 0, 784), out7.narrow(1, 0, 784)));
  EXPECT_EQ(image_part(out7, s).size(1), 784);
}

TEST(ConditionalNetworks, DSeesTheLabel) {
  torch::manual_seed(2);
  const NetworkShape s = network_shape(conditional_config());
  Discriminator d(s);
  d->eval();
  torch::Tensor x = torch::rand({8, 794}) * 2 - 1;
  x.narrow(1, 784, 10).zero_();
  x.narrow(1, 784, 10).select(1, 3).fill_(1.0f);
  const torch::Tensor p3 = d->forward(x);
  ASSERT_EQ(p3.sizes(), (std::vector<std::int64_t>{8, 1}));
  EXPECT_TRUE(torch::all(p3.gt(0)).item<bool>() && torch::all(p3.lt(1)).item<bool>());
  torch::Tensor y = x.clone();
  y.narrow(1, 784, 10).zero_();
  y.narrow(1, 784, 10).select(1, 5).fill_(1.0f);
  EXPECT_FALSE(torch::allclose(d->forward(y), p3));
}

TEST(ConditionalNetworks, AnEnsembleSamplesImagesAClassOrItsDrawnClasses) {
  torch::manual_seed(3);
  Ensemble e;
  e.shape = network_shape(conditional_config());
  for (int i = 0; i < 2; ++i) e.generators.emplace_back(Role::kGenerator, e.shape, 2e-4, AdamSettings{}, LossKind::kBce);
  e.weights = {0.25, 0.75};
  const torch::Tensor images = e.sample(20, 5);
  EXPECT_EQ(images.sizes(), (std::vector<std::int64_t>{20, 784}));
  const ClassSamples drawn = sample_conditional(e, 20, 5);
  EXPECT_TRUE(torch::equal(drawn.samples, images));
  EXPECT_EQ(drawn.labels.size(), 20u);
  const ClassSamples four = sample_conditional(e, 30, 5, 4);
  EXPECT_EQ(four.samples.size(1), 784);
  EXPECT_EQ(four.labels, std::vector<std::uint8_t>(30, 4));
  // An encoded and decoded conditional generator draws the same.
  Ensemble back = Ensemble::decode(e.encode(), "test");
  EXPECT_TRUE(torch::equal(sample_conditional(back, 30, 5, 4).samples, four.samples));
}

TEST(ConditionalNetworks, RealRowsCarryTheOneHotOfTheirLabel) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(CELLGAN_BINARY_DIR) / "test-tmp" / ("conditional-" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::vector<std::uint8_t> labels;
  write_idx_images((folder / "train-images-idx3-ubyte").string(), test::synthetic_idx_images(30, 6, labels));
  write_idx_labels((folder / "train-labels-idx1-ubyte").string(), labels);
  Config c = conditional_config();
  c.data.dataset = DatasetKind::kIdx;
  c.data.path = folder.string();
  const TrainingData data(c);
  Config plain = c;
  plain.network.kind = NetworkKind::kDcgan;
  const TrainingData images(plain);
  EXPECT_EQ(data.dim(), 794);
  const torch::Tensor index = torch::tensor({0, 13, 29}, torch::kLong);
  const torch::Tensor rows = data.rows(index);
  ASSERT_EQ(rows.size(1), 794);
  EXPECT_TRUE(torch::equal(rows.narrow(1, 0, 784), images.rows(index)));
  EXPECT_TRUE(torch::equal(rows.narrow(1, 784, 10).argmax(1), torch::tensor({0, 3, 9}, torch::kLong)));
  EXPECT_TRUE(torch::equal(rows.narrow(1, 784, 10).sum(1), torch::ones({3})));
  fs::remove_all(folder);
}

}  // namespace
}  // namespace cellgan
