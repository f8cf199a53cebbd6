// Stacked networks: a stacked forward pass equals each member's own
// network, and a row reads and writes the Individual byte form exactly.
#include "common/nn/stacked_networks.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "tests/nn/small_networks.h"
#include "tests/nn/stacked_members.h"

namespace cellgan {
namespace {

using test::aged_individual;
using test::same_bits;

std::vector<Individual> members_of(Role role, const NetworkShape& shape, int count) {
  std::vector<Individual> members;
  for (int p = 0; p < count; ++p) members.push_back(aged_individual(role, shape, 1e-4 * (p + 1), p, 40 + p));
  return members;
}

// Every member's rows of the stacked output against its own network's
// output on the same rows.
void expect_forward_per_member(Role role, const NetworkShape& shape, std::int64_t batch) {
  std::vector<Individual> members = members_of(role, shape, 3);
  std::unique_ptr<StackedMembers> stack;
  if (role == Role::kGenerator) {
    stack = std::make_unique<StackedGenerator>(shape, 3, 2e-4, AdamSettings{}, LossKind::kBce);
  } else {
    stack = std::make_unique<StackedDiscriminator>(shape, 3, 2e-4, AdamSettings{}, LossKind::kBce);
  }
  for (int p = 0; p < 3; ++p) stack->load_row(p, members[p]);
  torch::manual_seed(5);
  const std::int64_t width = role == Role::kGenerator ? shape.latent_dim : shape.data_dim;
  const torch::Tensor x = torch::randn({3, batch, width});
  const torch::Tensor stacked = stack->forward(x);
  for (int p = 0; p < 3; ++p) {
    const torch::Tensor alone = role == Role::kGenerator ? members[p].generator()->forward(x[p])
                                                         : members[p].discriminator()->forward(x[p]);
    EXPECT_TRUE(same_bits(stacked[p], alone))
        << "member " << p << ", batch " << batch << ": max difference "
        << (stacked[p] - alone).abs().max().item<double>();
  }
}

TEST(StackedNetworks, MlpForwardEqualsEachMembersNetworkToTheBit) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  for (const std::int64_t batch : {64, 100}) {
    expect_forward_per_member(Role::kGenerator, test::mnist_mlp_shape(), batch);
    expect_forward_per_member(Role::kDiscriminator, test::mnist_mlp_shape(), batch);
  }
}

TEST(StackedNetworks, ToyForwardEqualsEachMembersNetworkToTheBit) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  expect_forward_per_member(Role::kGenerator, test::wide_toy_shape(), 64);
  expect_forward_per_member(Role::kDiscriminator, test::wide_toy_shape(), 64);
}

TEST(StackedNetworks, CriticHasNoSigmoid) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  NetworkShape shape = test::wide_toy_shape();
  shape.d_output = DiscriminatorOutput::kScore;
  expect_forward_per_member(Role::kDiscriminator, shape, 64);
}

TEST(StackedNetworks, RowBytesAreTheIndividualsEncodedBytes) {
  const NetworkShape shape = test::mnist_mlp_shape();
  // Ages 0 (no Adam state: step -1 in the bytes), 1 and 3.
  std::vector<Individual> members = members_of(Role::kDiscriminator, shape, 3);
  members[1].set_learning_rate(3.5e-4);
  members[2].loss = LossKind::kMse;
  StackedDiscriminator stack(shape, 3, 2e-4, {}, LossKind::kBce);
  for (int p = 0; p < 3; ++p) stack.load_row(p, members[p]);
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(stack.row_bytes(p), members[p].encode()) << "member " << p;
    EXPECT_EQ(stack.row_bytes(p, /*with_optimizer_state=*/false), members[p].encode(false)) << "member " << p;
  }
  EXPECT_EQ(stack.loss[2], LossKind::kMse);
  EXPECT_DOUBLE_EQ(stack.learning_rate(1), 3.5e-4);
  // From bytes as from the individual, and back to an individual.
  StackedDiscriminator again(shape, 3, 2e-4, {}, LossKind::kBce);
  again.load_row(0, members[2].encode());
  EXPECT_EQ(again.row_bytes(0), members[2].encode());
  EXPECT_EQ(again.to_individual(0).encode(), members[2].encode());
  // Every row at once, each as to_individual() gives it, its Adam rate too.
  stack.optimizer().set_learning_rate(2, 9e-4);
  const std::vector<Individual> rows = stack.to_individuals();
  ASSERT_EQ(rows.size(), 3u);
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(rows[p].encode(), members[p].encode()) << "member " << p;
    EXPECT_EQ(rows[p].encode(), stack.to_individual(p).encode()) << "member " << p;
    EXPECT_DOUBLE_EQ(rows[p].adam_learning_rate(), stack.to_individual(p).adam_learning_rate()) << "member " << p;
  }
  EXPECT_DOUBLE_EQ(rows[2].adam_learning_rate(), 9e-4);
}

// Every row at once is each row loaded alone: weights, moments (none for a
// member that never stepped), buffers, step counts, both rates, bookkeeping.
TEST(StackedNetworks, LoadRowsIsLoadRowOfEachRow) {
  NetworkShape dcgan = test::mnist_mlp_shape();
  dcgan.kind = NetworkKind::kDcgan;  // batch norm: buffers too
  for (const NetworkShape& shape : {test::mnist_mlp_shape(), dcgan}) {
    std::vector<Individual> members = members_of(Role::kDiscriminator, shape, 3);  // ages 0, 1 and 2
    members[1].set_adam_learning_rate(9e-4);
    members[2].loss = LossKind::kMse;
    StackedDiscriminator one_by_one(shape, 3, 2e-4, {}, LossKind::kBce);
    StackedDiscriminator together(shape, 3, 2e-4, {}, LossKind::kBce);
    for (int p = 0; p < 3; ++p) one_by_one.load_row(p, members[p]);
    together.load_rows({&members[0], &members[1], &members[2]});
    for (int p = 0; p < 3; ++p) {
      EXPECT_EQ(together.row_bytes(p), one_by_one.row_bytes(p)) << to_string(shape.kind) << " member " << p;
      EXPECT_EQ(together.row_bytes(p), members[p].encode()) << to_string(shape.kind) << " member " << p;
      EXPECT_EQ(together.loss[p], members[p].loss);
      EXPECT_EQ(together.source_cell[p], members[p].source_cell);
      EXPECT_DOUBLE_EQ(together.fitness[p], members[p].fitness);
      EXPECT_DOUBLE_EQ(together.learning_rate(p), members[p].learning_rate());
    }
    EXPECT_TRUE(torch::equal(together.optimizer().steps(), one_by_one.optimizer().steps()));
    EXPECT_TRUE(torch::equal(together.optimizer().learning_rates(), one_by_one.optimizer().learning_rates()));
    for (std::size_t i = 0; i < together.optimizer().exp_avg().size(); ++i)
      EXPECT_TRUE(torch::equal(together.optimizer().exp_avg_sq()[i], one_by_one.optimizer().exp_avg_sq()[i])) << i;
    EXPECT_THROW(together.load_rows({&members[0]}), std::invalid_argument);
  }
}

TEST(StackedNetworks, BytesWithoutAdamStateLoadAsAFreshAdam) {
  const NetworkShape shape = test::small_toy_shape();
  Individual aged = aged_individual(Role::kGenerator, shape, 2e-4, 2, 9);
  StackedGenerator stack(shape, 2, 2e-4, {}, LossKind::kBce);
  stack.load_row(1, aged);
  stack.load_row(1, aged.encode(/*with_optimizer_state=*/false));
  EXPECT_EQ(stack.optimizer().steps()[1].item<std::int64_t>(), 0);
  for (const torch::Tensor& m : stack.optimizer().exp_avg()) EXPECT_EQ(m[1].abs().sum().item<float>(), 0.0F);
  EXPECT_EQ(stack.row_bytes(1), aged.encode(false));
}

TEST(StackedNetworks, AdamLearningRateOfTheIndividualComesAlong) {
  const NetworkShape shape = test::small_toy_shape();
  Individual ind = aged_individual(Role::kGenerator, shape, 2e-4, 1, 3);
  ind.set_adam_learning_rate(7e-4);
  StackedGenerator stack(shape, 1, 2e-4, {}, LossKind::kBce);
  stack.load_row(0, ind);
  EXPECT_DOUBLE_EQ(stack.learning_rate(0), 2e-4);
  EXPECT_DOUBLE_EQ(stack.optimizer().learning_rates()[0].item<double>(), 7e-4);
  EXPECT_DOUBLE_EQ(stack.to_individual(0).adam_learning_rate(), 7e-4);
  // The bytes carry the individual's own rate only, as Individual::decode gives.
  stack.load_row(0, ind.encode());
  EXPECT_DOUBLE_EQ(stack.optimizer().learning_rates()[0].item<double>(), 2e-4);
}

TEST(StackedNetworks, ForeignBytesAreRefusedAndTheRowIsKept) {
  const NetworkShape shape = test::small_toy_shape();
  StackedGenerator stack(shape, 2, 2e-4, {}, LossKind::kBce);
  stack.load_row(0, aged_individual(Role::kGenerator, shape, 2e-4, 1, 1));
  const Bytes before = stack.row_bytes(0);
  const Bytes discriminator = aged_individual(Role::kDiscriminator, shape, 2e-4, 1, 2).encode();
  EXPECT_THROW(stack.load_row(0, discriminator), InputError);
  Bytes other = aged_individual(Role::kGenerator, test::wide_toy_shape(), 2e-4, 1, 2).encode();
  EXPECT_THROW(stack.load_row(0, other), InputError);
  Bytes truncated = aged_individual(Role::kGenerator, shape, 2e-4, 1, 3).encode();
  truncated.resize(truncated.size() - 4);
  EXPECT_THROW(stack.load_row(0, truncated), InputError);
  Bytes trailing = aged_individual(Role::kGenerator, shape, 2e-4, 1, 3).encode();
  trailing.push_back(0);
  EXPECT_THROW(stack.load_row(0, trailing), InputError);
  EXPECT_EQ(stack.row_bytes(0), before);
  EXPECT_THROW(stack.load_row(2, before), std::out_of_range);
}

// Every kind is stacked, dcgan_conditional included: its G takes the label
// slots in and gives [image, onehot], its D takes [image, onehot].
TEST(StackedNetworks, EveryKindIsStacked) {
  for (const NetworkKind kind : {NetworkKind::kMlp, NetworkKind::kToy, NetworkKind::kDcgan, NetworkKind::kSngan,
                                 NetworkKind::kDcganConditional})
    EXPECT_TRUE(is_stacked(kind)) << to_string(kind);
  NetworkShape shape;
  shape.kind = NetworkKind::kDcganConditional;
  shape.latent_dim = 74;
  shape.data_dim = 794;
  StackedGenerator g(shape, 2, 2e-4, {}, LossKind::kBce);
  StackedDiscriminator d(shape, 2, 2e-4, {}, LossKind::kBce);
  d.network()->eval();
  EXPECT_EQ(g.forward(torch::randn({2, 3, 74})).sizes(), torch::IntArrayRef({2, 3, 794}));
  EXPECT_EQ(d.forward(torch::rand({2, 3, 794})).sizes(), torch::IntArrayRef({2, 3, 1}));
  EXPECT_THROW(g.forward(torch::randn({2, 3, 64})), std::invalid_argument);
  EXPECT_THROW(StackedGenerator(shape, 0, 2e-4, {}, LossKind::kBce), std::invalid_argument);
}

// A stack whose rows are all loaded need not draw: an undrawn stack of any
// kind leaves Torch's global generator as it was, and once loaded it is the
// drawn one loaded alike.
TEST(StackedNetworks, AnUndrawnStackDrawsNothingAndLoadsAsADrawnOne) {
  NetworkShape dcgan = test::mnist_mlp_shape();
  dcgan.kind = NetworkKind::kDcgan;
  NetworkShape sngan = dcgan;
  sngan.kind = NetworkKind::kSngan;
  for (const NetworkShape& shape : {test::mnist_mlp_shape(), dcgan, sngan}) {
    for (const Role role : {Role::kGenerator, Role::kDiscriminator}) {
      SCOPED_TRACE(std::string(to_string(shape.kind)) + (role == Role::kGenerator ? " G" : " D"));
      const std::vector<Individual> members = members_of(role, shape, 2);
      torch::manual_seed(5);
      const torch::Tensor expected = torch::rand({4});
      const auto stack = [&](InitialWeights weights) -> std::unique_ptr<StackedMembers> {
        if (role == Role::kGenerator)
          return std::make_unique<StackedGenerator>(shape, 2, 2e-4, AdamSettings{}, LossKind::kBce, torch::kCPU, weights);
        return std::make_unique<StackedDiscriminator>(shape, 2, 2e-4, AdamSettings{}, LossKind::kBce, torch::kCPU,
                                                      weights);
      };
      torch::manual_seed(5);
      const auto undrawn = stack(InitialWeights::kUndrawn);
      EXPECT_TRUE(torch::equal(torch::rand({4}), expected)) << "the global generator was drawn from";
      EXPECT_FALSE(undrawn->network()->drawn());
      const auto drawn = stack(InitialWeights::kDrawn);
      EXPECT_TRUE(drawn->network()->drawn());
      undrawn->load_rows({&members[0], &members[1]});
      drawn->load_rows({&members[0], &members[1]});
      for (int p = 0; p < 2; ++p) EXPECT_EQ(undrawn->row_bytes(p), drawn->row_bytes(p)) << "member " << p;
      const std::int64_t width = role == Role::kGenerator ? shape.latent_dim : shape.data_dim;
      const torch::Tensor x = torch::rand({2, 3, width});
      undrawn->network()->eval();
      drawn->network()->eval();
      EXPECT_TRUE(torch::equal(undrawn->network()->forward(x), drawn->network()->forward(x)));
    }
  }
}

TEST(StackedLinear, EachMemberIsItsOwnAffineMap) {
  torch::manual_seed(2);
  StackedLinear layer(4, 5, 3);
  const torch::Tensor x = torch::randn({4, 6, 5});
  const torch::Tensor y = layer->forward(x);
  ASSERT_EQ(y.sizes(), (torch::IntArrayRef{4, 6, 3}));
  for (int p = 0; p < 4; ++p) {
    // A Linear holding the member's row (weight [out, in]) gives the same.
    torch::nn::Linear linear(5, 3);
    {
      torch::NoGradGuard no_grad;
      linear->weight.copy_(member_row(layer->tensors()[0], layer->weight, p));
      linear->bias.copy_(member_row(layer->tensors()[1], layer->bias, p));
    }
    EXPECT_TRUE(torch::allclose(y[p], linear->forward(x[p]), 1e-6, 1e-6)) << "member " << p;
  }
  EXPECT_THROW(layer->forward(torch::randn({3, 6, 5})), std::invalid_argument);
  EXPECT_THROW(layer->forward(torch::randn({4, 6, 4})), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
