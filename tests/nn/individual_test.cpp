// Individuals: bit-exact encode/decode, deep copies, and the learning rate
// that survives restoring Adam state (Lipizzaner's bug).
#include "common/nn/individual.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <utility>

#include "common/bytes.h"
#include "common/error.h"
#include "tests/nn/small_networks.h"

namespace cellgan {
namespace {


// One Adam step on a simple loss, so the optimizer has state.
void step(Individual& ind) {
  torch::manual_seed(3);
  ind.optimizer().zero_grad();
  ind.generator()->forward(torch::randn({16, 4})).pow(2).sum().backward();
  ind.optimizer().step();
}

TEST(Individual, EncodeDecodeIsBitExactIncludingAdamState) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kMse);
  step(a);
  a.fitness = 0.25;
  a.source_cell = 3;
  a.set_learning_rate(3.5e-4);
  const auto bytes = a.encode();
  Individual b = Individual::decode(bytes, test::small_toy_shape(), {});
  EXPECT_EQ(b.encode(), bytes);
  EXPECT_EQ(b.loss, LossKind::kMse);
  EXPECT_EQ(b.source_cell, 3);
  EXPECT_DOUBLE_EQ(b.fitness, 0.25);
  EXPECT_DOUBLE_EQ(b.learning_rate(), 3.5e-4);
  // The same next step from both gives the same weights: the Adam moments
  // and step counts came across.
  step(a);
  step(b);
  EXPECT_EQ(a.encode(), b.encode());
}

TEST(Individual, EncodingAllocatesItsBytesOnce) {
  // With Adam state for every parameter the size bound is exact: one
  // allocation of exactly the encoded size, no slack from growing.
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kMse);
  step(a);
  const auto bytes = a.encode();
  EXPECT_EQ(bytes.capacity(), bytes.size());
  // Without the state the bound still holds.
  const auto weights = a.encode(/*with_optimizer_state=*/false);
  EXPECT_GE(weights.capacity(), weights.size());
  EXPECT_LT(weights.size(), bytes.size());
}

TEST(Individual, EncodeToAppendsTheSameBytesWithinItsBound) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kMse);
  step(a);
  for (bool with_state : {true, false}) {
    const auto alone = a.encode(with_state);
    ByteWriter w;
    w.reserve(4 + a.encoded_size_bound(with_state));
    w.put<std::uint32_t>(0xabcdef01u);  // bytes already in the writer stay first
    a.encode_to(w, with_state);
    ASSERT_EQ(w.size(), 4 + alone.size()) << with_state;
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), w.bytes().begin() + 4)) << with_state;
    // Exact once Adam has stepped, with or without its state.
    EXPECT_EQ(a.encoded_size_bound(with_state), alone.size()) << with_state;
  }
  // A fresh Adam has no state yet: the bound is then a bound.
  Individual fresh(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kMse);
  EXPECT_GT(fresh.encoded_size_bound(), fresh.encode().size());
  EXPECT_EQ(fresh.encoded_size_bound(false), fresh.encode(false).size());
}

TEST(Individual, ReleasedGradientsAreFreedAndChangeNoLaterStep) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kBce);
  step(a);
  Individual b = a.clone();
  step(b);  // b keeps its gradient tensors
  step(a);
  a.release_gradients();
  for (const auto& p : a.module().parameters()) EXPECT_FALSE(p.grad().defined());
  for (const auto& p : b.module().parameters()) EXPECT_TRUE(p.grad().defined());
  step(a);
  step(b);
  EXPECT_EQ(a.encode(), b.encode());
}

TEST(Individual, CloneWeightsDropsOnlyTheAdamState) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kMse);
  step(a);
  a.source_cell = 2;
  const Individual w = a.clone_weights();
  EXPECT_EQ(w.encode(), a.encode(/*with_optimizer_state=*/false));
  EXPECT_NE(w.encode(), a.encode());
  EXPECT_EQ(w.learning_rate(), a.learning_rate());
}

TEST(Individual, DecodingWithoutAdamStateSkipsItAndStillChecksTheBytes) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kMse);
  step(a);
  a.source_cell = 2;
  const auto bytes = a.encode();
  const Individual w = Individual::decode(bytes, test::small_toy_shape(), {}, /*with_optimizer_state=*/false);
  EXPECT_EQ(w.encode(), a.encode(/*with_optimizer_state=*/false));
  EXPECT_EQ(w.source_cell, 2);
  auto truncated = bytes;
  truncated.resize(bytes.size() - 4);  // cut inside the last Adam moment
  EXPECT_THROW(Individual::decode(truncated, test::small_toy_shape(), {}, false), InputError);
}

TEST(Individual, CloneIsIndependent) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kBce);
  Individual b = a.clone();
  step(b);
  EXPECT_NE(a.encode(), b.encode());
  const auto pa = a.module().parameters();
  const auto pb = b.module().parameters();
  EXPECT_FALSE(torch::equal(pa[0], pb[0]));
}

// clone() copies on the device without the bytes, and gives what
// decode(encode()) gives: the same bytes, Adam's learning rate back to the
// individual's own, and the same draws from Torch's generator; for the toy
// and for sngan's discriminator, whose spectral-norm vectors are buffers.
TEST(Individual, CloneIsTheDecodeOfItsBytes) {
  NetworkShape sngan;
  sngan.kind = NetworkKind::kSngan;
  for (const auto& [role, shape] : {std::pair{Role::kGenerator, test::small_toy_shape()},
                                    std::pair{Role::kDiscriminator, sngan}}) {
    torch::manual_seed(1);
    Individual a(role, shape, 2e-4, {}, LossKind::kMse);
    if (role == Role::kGenerator) step(a);
    a.fitness = 0.5;
    a.source_cell = 4;
    a.set_learning_rate(3e-4);
    a.set_adam_learning_rate(9e-4);
    torch::manual_seed(7);
    const Individual decoded = Individual::decode(a.encode(), shape, {}, true);
    const double after_decode = torch::rand({1}).item<double>();
    torch::manual_seed(7);
    const Individual cloned = a.clone();
    EXPECT_EQ(torch::rand({1}).item<double>(), after_decode);
    EXPECT_EQ(cloned.encode(), decoded.encode());
    EXPECT_EQ(cloned.encode(), a.encode());
    EXPECT_DOUBLE_EQ(cloned.adam_learning_rate(), decoded.adam_learning_rate());
    EXPECT_DOUBLE_EQ(cloned.adam_learning_rate(), 3e-4);
    EXPECT_EQ(a.clone_weights().encode(), Individual::decode(a.encode(false), shape, {}, true).encode());
    EXPECT_EQ(cloned.moments(0).has_value(), role == Role::kGenerator);
  }
}

// A snapshot is a clone whose parameters and Adam moments are the
// original's own tensors: the same bytes, nothing copied; new tensors put
// in the original (as the fault `nan` puts them) leave it as it was, and so
// does the original's being replaced. snapshot_weights() shares the
// parameters and has a fresh Adam state, as clone_weights().
TEST(Individual, ASnapshotIsACloneSharingTheWeightsAndAdamMoments) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kMse);
  step(a);
  a.fitness = 0.5;
  a.set_learning_rate(3e-4);
  const Individual snap = a.snapshot();
  EXPECT_EQ(snap.encode(), a.clone().encode());
  ASSERT_TRUE(snap.moments(0).has_value());
  EXPECT_TRUE(snap.moments(0)->exp_avg.is_same(a.moments(0)->exp_avg));
  EXPECT_TRUE(snap.moments(0)->exp_avg_sq.is_same(a.moments(0)->exp_avg_sq));
  EXPECT_FALSE(a.clone().moments(0)->exp_avg.is_same(a.moments(0)->exp_avg));
  auto& self = const_cast<Individual&>(snap);
  const auto own = a.module().parameters();
  const auto shared = self.module().parameters();
  for (std::size_t i = 0; i < own.size(); ++i) {
    EXPECT_EQ(shared[i].data_ptr(), own[i].data_ptr()) << "parameter " << i;
    EXPECT_FALSE(shared[i].is_same(own[i]));  // a handle of its own, for its own Adam
  }
  EXPECT_NE(a.clone().module().parameters()[0].data_ptr(), own[0].data_ptr());
  const Individual weights = a.snapshot_weights();
  EXPECT_EQ(weights.encode(), a.clone_weights().encode());
  EXPECT_FALSE(weights.moments(0).has_value());
  EXPECT_EQ(const_cast<Individual&>(weights).module().parameters()[0].data_ptr(), own[0].data_ptr());
  const std::vector<std::uint8_t> before = snap.encode();
  {  // new tensors in the original, as poison_generators() puts them: the snapshot is as it was
    torch::NoGradGuard no_grad;
    for (torch::Tensor& p : a.module().parameters())
      p.set_data(torch::full_like(p, std::numeric_limits<float>::quiet_NaN()));
  }
  EXPECT_FALSE(a.is_finite());
  EXPECT_EQ(snap.encode(), before);
  EXPECT_TRUE(snap.is_finite());
  a = Individual(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kMse);  // replaced whole
  EXPECT_EQ(snap.encode(), before);
}

TEST(Individual, RestoredAdamStateKeepsTheMutatedLearningRate) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kBce);
  step(a);
  a.set_learning_rate(7e-4);
  Individual b = a.clone();
  EXPECT_DOUBLE_EQ(b.learning_rate(), 7e-4);
  for (auto& group : b.optimizer().param_groups()) EXPECT_DOUBLE_EQ(group.options().get_lr(), 7e-4);
}

TEST(Individual, DecodeRejectsForeignAndTruncatedBytes) {
  torch::manual_seed(1);
  Individual a(Role::kGenerator, test::small_toy_shape(), 2e-4, {}, LossKind::kBce);
  auto bytes = a.encode();
  bytes.resize(bytes.size() / 2);
  EXPECT_THROW(Individual::decode(bytes, test::small_toy_shape(), {}), InputError);
  std::vector<std::uint8_t> foreign(64, 7);
  EXPECT_THROW(Individual::decode(foreign, test::small_toy_shape(), {}), InputError);
  NetworkShape wider = test::small_toy_shape();
  wider.toy_hidden = 16;
  EXPECT_THROW(Individual::decode(a.encode(), wider, {}), InputError);
}

TEST(Individual, NonFiniteWeightsAreDetected) {
  torch::manual_seed(1);
  Individual a(Role::kDiscriminator, test::small_toy_shape(), 2e-4, {}, LossKind::kBce);
  EXPECT_TRUE(a.is_finite());
  {
    torch::NoGradGuard no_grad;
    a.module().parameters()[0].view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
  }
  EXPECT_FALSE(a.is_finite());
}

TEST(Individual, AreFiniteJudgesEachAsIsFiniteDoes) {
  torch::manual_seed(1);
  std::vector<Individual> individuals;
  for (int i = 0; i < 6; ++i) {
    individuals.emplace_back(i % 2 ? Role::kDiscriminator : Role::kGenerator, test::small_toy_shape(), 2e-4,
                             AdamSettings{}, LossKind::kBce);
    if (i % 2 == 0) step(individuals.back());  // generators with Adam moments, discriminators without
  }
  const float inf = std::numeric_limits<float>::infinity();
  {
    torch::NoGradGuard no_grad;
    individuals[1].module().parameters().back().view(-1)[0] = -inf;  // the last parameter's first weight
    individuals[3].set_learning_rate(std::numeric_limits<double>::quiet_NaN());
    individuals[4].moments(1)->exp_avg_sq.view(-1)[2] = std::numeric_limits<float>::quiet_NaN();  // Adam only
    individuals[5].module().parameters()[0].fill_(3e38F);  // finite, though their float sum overflows
  }
  std::vector<const Individual*> all;
  for (const Individual& i : individuals) all.push_back(&i);
  const std::vector<bool> expected{true, false, true, false, false, true};
  EXPECT_EQ(Individual::are_finite(all), expected);
  for (std::size_t i = 0; i < individuals.size(); ++i) EXPECT_EQ(individuals[i].is_finite(), expected[i]) << i;
  // Any order, any subset; none at all.
  EXPECT_EQ(Individual::are_finite({all[4], all[0], all[1]}), (std::vector<bool>{false, true, false}));
  EXPECT_TRUE(Individual::are_finite({}).empty());
}

}  // namespace
}  // namespace cellgan
