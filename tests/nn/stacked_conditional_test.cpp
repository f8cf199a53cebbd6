// The dcgan_conditional kind as stacked networks (stacked_dcgan.h): a row
// reads and writes the Individual byte form exactly (halos, checkpoints and
// ensembles keep their format); a stacked forward pass and a stacked GAN
// step equal the members' own conditional networks and torch Adam, member
// by member, each member with its own labels (in its rows of the inputs)
// and its own dropout stream; a member's step does not depend on its stack.
// fp16: the per-member loss scale of lockstep training (StackedLossScaler)
// steps the conditional stacks as the unscaled step does, to the bit; on a
// GPU, a step under fp16 autocast has finite losses and moves every member
// (skipped without one).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "common/nn/device.h"
#include "common/nn/precision.h"
#include "common/nn/stacked_loss_scaler.h"
#include "common/nn/stacked_networks.h"
#include "tests/nn/stacked_members.h"

namespace cellgan {
namespace {

using test::aged_individual;
using test::bytes_difference;
using test::same_bits;

constexpr std::int64_t kMembers = 3;
constexpr std::int64_t kBatch = 16;

NetworkShape conditional_shape(DiscriminatorOutput output = DiscriminatorOutput::kProbability) {
  NetworkShape shape;
  shape.kind = NetworkKind::kDcganConditional;
  shape.latent_dim = 32 + kClassCount;
  shape.data_dim = kImageDim + kClassCount;
  shape.d_output = output;
  return shape;
}

// Real rows [image, onehot(label)] with each member's own labels, and
// latent rows whose label slots (argmax) pick each fake's class.
test::StepInputs conditional_inputs(const NetworkShape& shape, std::int64_t members, std::uint64_t seed) {
  torch::manual_seed(seed);
  const torch::Tensor labels = torch::randint(kClassCount, {members, kBatch}, torch::kLong);
  test::StepInputs in;
  in.real = torch::cat({torch::rand({members, kBatch, kImageDim}) * 2 - 1,
                        torch::one_hot(labels, kClassCount).to(torch::kFloat32)},
                       2);
  in.z_fake = torch::randn({members, kBatch, shape.latent_dim});
  in.z_step = torch::randn({members, kBatch, shape.latent_dim});
  return in;
}

std::vector<at::Generator> streams(std::uint64_t seed, std::int64_t members = kMembers) {
  std::vector<at::Generator> out;
  for (std::int64_t p = 0; p < members; ++p) out.push_back(at::detail::createCPUGenerator(seed + p));
  return out;
}

Individual aged_member(Role role, const NetworkShape& shape, int p) {
  return role == Role::kGenerator ? aged_individual(role, shape, 1e-4 * (p + 1), p % 3, 100 + p)
                                  : aged_individual(role, shape, 3e-4 / (p + 1), (p + 1) % 3 * 2, 200 + p);
}

struct Stacks {
  explicit Stacks(const NetworkShape& shape, std::int64_t members = kMembers,
                  torch::Device device = torch::kCPU)
      : g(shape, members, 2e-4, {}, LossKind::kBce, device), d(shape, members, 2e-4, {}, LossKind::kBce, device) {}
  StackedGenerator g;
  StackedDiscriminator d;
};

void load_aged(Stacks& s, const NetworkShape& shape) {
  for (int p = 0; p < s.g.size(); ++p) {
    s.g.load_row(p, aged_member(Role::kGenerator, shape, p));
    s.d.load_row(p, aged_member(Role::kDiscriminator, shape, p));
  }
}

TEST(StackedConditional, IsStackedAndItsRowBytesAreTheIndividualsEncodedBytes) {
  EXPECT_TRUE(is_stacked(NetworkKind::kDcganConditional));
  for (const DiscriminatorOutput output : {DiscriminatorOutput::kProbability, DiscriminatorOutput::kScore}) {
    const NetworkShape shape = conditional_shape(output);
    for (const Role role : {Role::kGenerator, Role::kDiscriminator}) {
      SCOPED_TRACE(role == Role::kGenerator ? "G" : "D");
      std::vector<Individual> members;
      for (int p = 0; p < kMembers; ++p) members.push_back(aged_member(role, shape, p));
      members[1].loss = LossKind::kMse;
      std::unique_ptr<StackedMembers> stack;
      if (role == Role::kGenerator)
        stack = std::make_unique<StackedGenerator>(shape, kMembers, 2e-4, AdamSettings{}, LossKind::kBce);
      else
        stack = std::make_unique<StackedDiscriminator>(shape, kMembers, 2e-4, AdamSettings{}, LossKind::kBce);
      for (int p = 0; p < kMembers; ++p) stack->load_row(p, members[p]);
      for (int p = 0; p < kMembers; ++p) {
        EXPECT_EQ(stack->row_bytes(p), members[p].encode()) << "member " << p;
        EXPECT_EQ(stack->row_bytes(p, false), members[p].encode(false)) << "member " << p;
        EXPECT_EQ(stack->to_individual(p).encode(), members[p].encode()) << "member " << p;
      }
    }
  }
}

// G, D and the critic D, in evaluation mode and in training mode (batch
// statistics, D's dropout from generators seeded as Torch's global one is
// before each member's own pass): each member's rows, and the running
// statistics, are its own network's (to the bit where the kernels round
// alike, else within 1e-5 of the largest output as for the dcgan kind).
TEST(StackedConditional, ForwardEqualsEachMembersNetworkWithItsOwnLabels) {
  const test::StepInputs in = conditional_inputs(conditional_shape(), kMembers, 5);
  const std::vector<std::pair<Role, DiscriminatorOutput>> networks{
      {Role::kGenerator, DiscriminatorOutput::kProbability},
      {Role::kDiscriminator, DiscriminatorOutput::kProbability},
      {Role::kDiscriminator, DiscriminatorOutput::kScore}};
  for (const bool training : {false, true}) {
    for (const auto& [role, output] : networks) {
      SCOPED_TRACE(std::string(training ? "training " : "evaluation ") + (role == Role::kGenerator ? "G" : "D") +
                   (output == DiscriminatorOutput::kScore ? " (critic)" : ""));
      const NetworkShape shape = conditional_shape(output);
      Stacks s(shape);
      load_aged(s, shape);
      std::vector<Individual> members;
      for (int p = 0; p < kMembers; ++p) members.push_back(aged_member(role, shape, p));
      StackedMembers& stack = role == Role::kGenerator ? static_cast<StackedMembers&>(s.g) : s.d;
      stack.network()->train(training);
      stack.network()->set_member_generators(streams(70));
      const torch::Tensor x = role == Role::kGenerator ? in.z_fake : in.real;
      const torch::Tensor stacked = stack.forward(x);
      for (int p = 0; p < kMembers; ++p) {
        members[p].module().train(training);
        torch::manual_seed(70 + p);
        const torch::Tensor alone = role == Role::kGenerator ? members[p].generator()->forward(x[p])
                                                             : members[p].discriminator()->forward(x[p]);
        if (test::kernels_round_alike()) {
          EXPECT_TRUE(same_bits(stacked[p], alone)) << "member " << p;
          EXPECT_EQ(bytes_difference(stack.row_bytes(p), members[p].encode()), "") << "member " << p;
        } else {
          EXPECT_LT(((stacked[p] - alone).abs().max() / alone.abs().max()).item<double>(), 1e-5) << "member " << p;
        }
      }
      if (role == Role::kGenerator) {  // [image, onehot(argmax of the label slots)]
        const torch::Tensor labels = in.z_fake.narrow(2, shape.latent_dim - kClassCount, kClassCount).argmax(2);
        EXPECT_TRUE(torch::equal(stacked.narrow(2, kImageDim, kClassCount),
                                 torch::one_hot(labels, kClassCount).to(torch::kFloat32)));
      }
    }
  }
}

// Two GAN steps (D, then G) of the stacks against the same members stepped
// alone with torch Adam, their own learning rates, Adam ages, labels and
// dropout streams: on the CPU every layer rounds as the member's own
// (stacked_dcgan_training_test.cpp), so the rows come out to the bit.
TEST(StackedConditional, StepEqualsTheMembersSteppedAloneToTheBit) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  const NetworkShape shape = conditional_shape();
  Stacks s(shape);
  load_aged(s, shape);
  std::vector<Individual> g, d;
  for (int p = 0; p < kMembers; ++p) {
    g.push_back(aged_member(Role::kGenerator, shape, p));
    d.push_back(aged_member(Role::kDiscriminator, shape, p));
  }
  for (int round = 0; round < 2; ++round) {
    const std::uint64_t seed = 300 + 10 * round;
    const test::StepInputs in = conditional_inputs(shape, kMembers, 7 + round);
    s.d.network()->set_member_generators(streams(seed));
    test::step_stacked(s.g, s.d, in, BceForm::kPyTorch);
    test::StepLosses alone;
    for (int p = 0; p < kMembers; ++p) {
      torch::manual_seed(seed + p);
      test::step_alone(g[p], d[p], in, p, BceForm::kPyTorch, alone);
    }
  }
  for (int p = 0; p < kMembers; ++p) {
    EXPECT_EQ(bytes_difference(s.d.row_bytes(p), d[p].encode()), "") << "D of member " << p;
    EXPECT_EQ(bytes_difference(s.g.row_bytes(p), g[p].encode()), "") << "G of member " << p;
  }
}

// Member 1 of a stack of three and the same member in a stack of its own,
// with the same labels and dropout stream: the same bits after two steps.
TEST(StackedConditional, AMembersStepDoesNotDependOnItsStack) {
  const NetworkShape shape = conditional_shape();
  Stacks three(shape), one(shape, 1);
  load_aged(three, shape);
  one.g.load_row(0, three.g.row_bytes(1));
  one.d.load_row(0, three.d.row_bytes(1));
  for (int round = 0; round < 2; ++round) {
    const test::StepInputs in = conditional_inputs(shape, kMembers, 7 + round);
    const test::StepInputs alone{in.real.narrow(0, 1, 1), in.z_fake.narrow(0, 1, 1), in.z_step.narrow(0, 1, 1)};
    three.d.network()->set_member_generators(streams(400 + 10 * round));
    one.d.network()->set_member_generators(streams(401 + 10 * round, 1));
    test::step_stacked(three.g, three.d, in, BceForm::kPyTorch);
    test::step_stacked(one.g, one.d, alone, BceForm::kPyTorch);
  }
  EXPECT_EQ(bytes_difference(three.d.row_bytes(1), one.d.row_bytes(0)), "") << "D";
  EXPECT_EQ(bytes_difference(three.g.row_bytes(1), one.g.row_bytes(0)), "") << "G";
}

// One step as lockstep training takes it with fp16 (worker/lockstep_training.cpp):
// each member's loss times its own scale, one backward pass, the
// gradients unscaled, the members with finite gradients stepped (D on its
// real rows, then on G's fakes, as lockstep training takes them). Returns
// the losses (D, then G) per member.
std::vector<double> scaled_step(Stacks& s, const test::StepInputs& in, bool autocast, double scale) {
  StackedLossScaler g_scaler(s.g.size(), s.g.device(), scale), d_scaler(s.d.size(), s.d.device(), scale);
  const auto backward_and_step = [](StackedMembers& stack, StackedLossScaler& scaler, const MemberLosses& losses) {
    scaler.scaled(losses.attached).backward();
    std::vector<torch::Tensor> gradients;
    for (const torch::Tensor& p : stack.network()->parameters()) gradients.push_back(p.grad());
    const torch::Tensor finite = scaler.unscale(gradients);
    scaler.update(finite);
    stack.optimizer().step(finite);
  };
  const Precision precision = autocast ? Precision::kFp16 : Precision::kFp32;
  torch::Tensor fake, d_real, d_fake;
  {
    const AutocastScope scope(precision, s.g.device());
    torch::NoGradGuard no_grad;
    fake = s.g.forward(in.z_fake).to(torch::kFloat);
  }
  s.d.optimizer().zero_grad();
  {
    const AutocastScope scope(precision, s.d.device());
    d_real = s.d.forward(in.real);
    d_fake = s.d.forward(fake);
  }
  const MemberLosses d_losses = stacked_discriminator_loss(LossKind::kBce, d_real, d_fake, BceForm::kPyTorch);
  backward_and_step(s.d, d_scaler, d_losses);
  s.g.optimizer().zero_grad();
  {
    const AutocastScope scope(precision, s.g.device());
    d_fake = s.d.forward(s.g.forward(in.z_step));
  }
  const MemberLosses g_losses = stacked_generator_loss(LossKind::kBce, d_fake, BceForm::kPyTorch);
  backward_and_step(s.g, g_scaler, g_losses);
  std::vector<double> out;
  for (const MemberLosses* l : {&d_losses, &g_losses}) {
    const torch::Tensor host = l->per_member.to(torch::kFloat64).cpu();
    for (std::int64_t p = 0; p < host.size(0); ++p) out.push_back(host[p].item<double>());
  }
  for (const std::int64_t skipped : d_scaler.skipped()) EXPECT_EQ(skipped, 0);
  for (const std::int64_t skipped : g_scaler.skipped()) EXPECT_EQ(skipped, 0);
  return out;
}

// The loss scale (fp16's initial 2^16, a power of two) changes no bit of
// the step against a scale of 1: the scaled gradients are the plain ones
// times the scale, exactly, and unscaling them is exact.
TEST(StackedConditional, Fp16sLossScaleStepsAsThePlainStepToTheBit) {
  const NetworkShape shape = conditional_shape();
  Stacks plain(shape), scaled(shape);
  load_aged(plain, shape);
  load_aged(scaled, shape);
  const test::StepInputs in = conditional_inputs(shape, kMembers, 9);
  plain.d.network()->set_member_generators(streams(500));
  scaled.d.network()->set_member_generators(streams(500));
  const std::vector<double> plain_losses = scaled_step(plain, in, /*autocast=*/false, 1.0);
  const std::vector<double> scaled_losses = scaled_step(scaled, in, /*autocast=*/false, 65536.0);
  EXPECT_EQ(scaled_losses, plain_losses);
  for (int p = 0; p < kMembers; ++p) {
    EXPECT_TRUE(std::isfinite(scaled_losses[p]) && std::isfinite(scaled_losses[kMembers + p])) << "member " << p;
    EXPECT_EQ(bytes_difference(scaled.d.row_bytes(p), plain.d.row_bytes(p)), "") << "D of member " << p;
    EXPECT_EQ(bytes_difference(scaled.g.row_bytes(p), plain.g.row_bytes(p)), "") << "G of member " << p;
  }
}

// On a GPU (skipped without one): the same step under fp16 autocast has
// finite losses, skips no member, and moves every member's weights.
TEST(StackedConditional, Fp16StepOnAGpuHasFiniteLossesAndMovesEveryMember) {
  if (visible_gpus() == 0) GTEST_SKIP() << "no GPU is visible (LibTorch's CPU autocast has no fp16)";
  const NetworkShape shape = conditional_shape();
  const torch::Device gpu = resolve_device("cuda:0", 0);
  Stacks s(shape, kMembers, gpu);
  load_aged(s, shape);
  s.d.network()->set_member_generators(streams(600));
  const test::StepInputs host = conditional_inputs(shape, kMembers, 11);
  const test::StepInputs in{host.real.to(gpu), host.z_fake.to(gpu), host.z_step.to(gpu)};
  std::vector<Bytes> before;
  for (int p = 0; p < kMembers; ++p) before.push_back(s.g.row_bytes(p, false));
  const std::vector<double> losses = scaled_step(s, in, /*autocast=*/true, 65536.0);
  for (std::size_t i = 0; i < losses.size(); ++i) EXPECT_TRUE(std::isfinite(losses[i])) << "loss " << i;
  for (int p = 0; p < kMembers; ++p) EXPECT_NE(s.g.row_bytes(p, false), before[p]) << "G of member " << p;
}

}  // namespace
}  // namespace cellgan
