// The dcgan and sngan kinds as stacked networks: a row reads and writes
// the Individual byte form exactly; a stacked forward pass, and a stacked
// GAN step (BatchedAdam), equal the members' own networks and torch Adam,
// member by member, with each member's dropout masks from its own
// generator.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <memory>
#include <vector>

#include "common/nn/conditional_networks.h"
#include "common/nn/stacked_networks.h"
#include "common/nn/staged_dropout.h"
#include "tests/nn/stacked_members.h"

namespace cellgan {
namespace {

using test::aged_individual;
using test::same_bits;

constexpr std::int64_t kMembers = 3;

NetworkShape shape_of(NetworkKind kind, DiscriminatorOutput output = DiscriminatorOutput::kProbability) {
  NetworkShape shape;
  shape.kind = kind;
  shape.d_output = output;
  return shape;
}

std::vector<at::Generator> generators(std::uint64_t seed) {
  std::vector<at::Generator> out;
  for (std::int64_t p = 0; p < kMembers; ++p) out.push_back(at::detail::createCPUGenerator(seed + p));
  return out;
}

std::unique_ptr<StackedMembers> stack_of(Role role, const NetworkShape& shape, const std::vector<Individual>& members) {
  std::unique_ptr<StackedMembers> stack;
  const auto n = static_cast<std::int64_t>(members.size());
  if (role == Role::kGenerator)
    stack = std::make_unique<StackedGenerator>(shape, n, 2e-4, AdamSettings{}, LossKind::kBce);
  else
    stack = std::make_unique<StackedDiscriminator>(shape, n, 2e-4, AdamSettings{}, LossKind::kBce);
  for (std::int64_t p = 0; p < n; ++p) stack->load_row(p, members[static_cast<std::size_t>(p)]);
  return stack;
}

std::vector<Individual> aged(Role role, const NetworkShape& shape) {
  std::vector<Individual> members;
  for (int p = 0; p < kMembers; ++p) members.push_back(aged_individual(role, shape, 1e-4 * (p + 1), p, 60 + p));
  return members;
}

TEST(StackedDcgan, RowBytesAreTheIndividualsEncodedBytes) {
  for (const NetworkShape& shape : {shape_of(NetworkKind::kDcgan), shape_of(NetworkKind::kSngan),
                                    shape_of(NetworkKind::kDcgan, DiscriminatorOutput::kScore)}) {
    for (const Role role : {Role::kGenerator, Role::kDiscriminator}) {
      SCOPED_TRACE(std::string(to_string(shape.kind)) + (role == Role::kGenerator ? " G" : " D"));
      std::vector<Individual> members = aged(role, shape);
      members[1].loss = LossKind::kMse;
      const std::unique_ptr<StackedMembers> stack = stack_of(role, shape, members);
      for (int p = 0; p < kMembers; ++p) {
        EXPECT_EQ(stack->row_bytes(p), members[p].encode()) << "member " << p;
        EXPECT_EQ(stack->row_bytes(p, false), members[p].encode(false)) << "member " << p;
        EXPECT_EQ(stack->to_individual(p).encode(), members[p].encode()) << "member " << p;
      }
    }
  }
}

// On the CPU the dcgan layers round as each member's own (with OpenBLAS
// for the Linear layers, stacked_linear.h); spectral and layer norm round
// apart (stacked_layers_test.cpp).
bool exact(Role role, const NetworkShape& shape) {
  const bool dcgan_layers = role == Role::kGenerator ||
                            (shape.kind == NetworkKind::kDcgan && shape.d_output == DiscriminatorOutput::kProbability);
  return dcgan_layers && test::kernels_round_alike();
}

// Every member's rows of a stacked forward pass against its own network,
// in evaluation mode (running statistics, no dropout) and in training mode
// (batch statistics, dropout masks from generators seeded as Torch's
// global one is before each member's pass).
void expect_forward_per_member(Role role, const NetworkShape& shape, bool training) {
  std::vector<Individual> members = aged(role, shape);
  const std::unique_ptr<StackedMembers> stack = stack_of(role, shape, members);
  stack->network()->train(training);
  stack->network()->set_member_generators(generators(70));
  torch::manual_seed(5);
  const std::int64_t width = role == Role::kGenerator ? shape.latent_dim : shape.data_dim;
  const torch::Tensor x = torch::rand({kMembers, 16, width}) * 2 - 1;
  const torch::Tensor stacked = stack->forward(x);
  for (int p = 0; p < kMembers; ++p) {
    torch::nn::Module& module = members[p].module();
    module.train(training);
    torch::manual_seed(70 + p);
    const torch::Tensor alone = role == Role::kGenerator ? members[p].generator()->forward(x[p])
                                                         : members[p].discriminator()->forward(x[p]);
    const double difference = ((stacked[p] - alone).abs().max() / alone.abs().max()).item<double>();
    if (exact(role, shape))
      EXPECT_TRUE(same_bits(stacked[p], alone)) << "member " << p << ": relative difference " << difference;
    else
      EXPECT_LT(difference, 1e-5) << "member " << p;
  }
  // The running statistics a training pass updates, and the u of spectral
  // norm, come out as the members' own (to rounding where the forward does).
  for (int p = 0; p < kMembers; ++p) {
    if (exact(role, shape))
      EXPECT_EQ(test::bytes_difference(stack->row_bytes(p), members[p].encode()), "") << "member " << p;
    else
      EXPECT_EQ(test::beyond_tolerance(stack->row_bytes(p), members[p].encode(), 64, 1e-6, 0.0), "") << "member " << p;
  }
}

// The dcgan G and D to the bit; the sngan D and the dcgan critic within
// 1e-5 of the largest output (spectral and layer norm round apart by a few
// units in the last place).
TEST(StackedDcgan, ForwardEqualsEachMembersNetwork) {
  for (const bool training : {false, true}) {
    SCOPED_TRACE(training ? "training" : "evaluation");
    expect_forward_per_member(Role::kGenerator, shape_of(NetworkKind::kDcgan), training);
    expect_forward_per_member(Role::kDiscriminator, shape_of(NetworkKind::kDcgan), training);
    expect_forward_per_member(Role::kDiscriminator, shape_of(NetworkKind::kSngan), training);
    expect_forward_per_member(Role::kDiscriminator, shape_of(NetworkKind::kDcgan, DiscriminatorOutput::kScore),
                              training);
  }
}

TEST(StackedDcgan, TrainingForwardWithDropoutNeedsGenerators) {
  const NetworkShape shape = shape_of(NetworkKind::kDcgan);
  StackedDiscriminator stack(shape, 2, 2e-4, {}, LossKind::kBce);
  EXPECT_THROW(stack.forward(torch::zeros({2, 4, shape.data_dim})), std::logic_error);
  stack.network()->eval();
  EXPECT_EQ(stack.forward(torch::zeros({2, 4, shape.data_dim})).sizes(), torch::IntArrayRef({2, 4, 1}));
}

// Masks drawn ahead (staged_dropout.h) are the masks the passes draw, in
// their order, also where members share a generator; a pass with none
// staged for it is refused, and a restart takes the first again.
// For every discriminator that drops out: dcgan's and dcgan_conditional's.
TEST(StackedDcgan, StagedDropoutMasksAreTheOnesThePassesDraw) {
  for (const NetworkKind kind : {NetworkKind::kDcgan, NetworkKind::kDcganConditional}) {
    SCOPED_TRACE(to_string(kind));
    NetworkShape shape = shape_of(kind);
    if (is_conditional(shape)) shape.data_dim = kImageDim + kClassCount;  // the label slots
    const auto streams = [] {
      const at::Generator a = at::detail::createCPUGenerator(5), b = at::detail::createCPUGenerator(6);
      return std::vector<at::Generator>{a, a, b};
    };
    StackedDiscriminator drawing(shape, 3, 2e-4, {}, LossKind::kBce), staged(shape, 3, 2e-4, {}, LossKind::kBce);
    ASSERT_TRUE(drawing.network()->draws_dropout());
    {
      torch::NoGradGuard no_grad;
      const std::vector<StackedTensor> from = drawing.network()->parameter_tensors();
      const std::vector<StackedTensor> to = staged.network()->parameter_tensors();
      for (std::size_t i = 0; i < from.size(); ++i) to[i].stacked.copy_(from[i].stacked);
    }
    drawing.network()->set_member_generators(streams());
    staged.network()->set_member_generators(streams());
    const torch::Tensor x = torch::rand({3, 4, shape.data_dim});
    const torch::Tensor first = drawing.forward(x);
    const torch::Tensor second = drawing.forward(x);
    EXPECT_FALSE(torch::equal(first, second));
    clear_staged_dropout(*staged.network());
    stage_dropout_pass(*staged.network(), 4, torch::kCPU);
    stage_dropout_pass(*staged.network(), 4, torch::kCPU);
    restart_staged_dropout(*staged.network());
    EXPECT_TRUE(torch::equal(staged.forward(x), first));
    EXPECT_TRUE(torch::equal(staged.forward(x), second));
    EXPECT_THROW(staged.forward(x), std::logic_error);
    restart_staged_dropout(*staged.network());
    EXPECT_TRUE(torch::equal(staged.forward(x), first));
  }
}

}  // namespace
}  // namespace cellgan
