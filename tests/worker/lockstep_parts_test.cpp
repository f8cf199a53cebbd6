// Tests of LatentDraws (worker/lockstep_parts.h): each member's latent
// vectors come from its own generator, a step's worth at a time or several
// steps' worth at once, whatever the other members of the stack.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "common/nn/member_draws.h"
#include "tests/nn/stacked_members.h"
#include "worker/lockstep_parts.h"

namespace cellgan {
namespace {

using test::same_bits;

constexpr std::int64_t kRows = 5;
constexpr std::int64_t kLatent = 6;

std::vector<at::Generator> generators(const std::vector<std::uint64_t>& seeds) {
  std::vector<at::Generator> out;
  for (const std::uint64_t seed : seeds) out.push_back(generator_on(torch::kCPU, seed));
  return out;
}

// The step values `draws` gives a stack of `members`, `steps` steps.
std::vector<torch::Tensor> steps_of(LatentDraws& draws, std::int64_t members, int steps) {
  std::vector<torch::Tensor> out;
  torch::Tensor z = torch::empty({members, kRows, kLatent});
  for (int s = 0; s < steps; ++s) {
    draws.next(z);
    out.push_back(z.clone());
  }
  return out;
}

TEST(LatentDraws, SeveralStepsADrawAreEachMembersOwnDrawsInSlices) {
  constexpr std::int64_t kStepsADraw = 4;
  LatentDraws draws(generators({1, 2, 3}), kStepsADraw);
  const std::vector<torch::Tensor> steps = steps_of(draws, 3, 6);
  for (std::int64_t p = 0; p < 3; ++p) {
    at::Generator own = generator_on(torch::kCPU, static_cast<std::uint64_t>(p + 1));
    const torch::Tensor first = torch::empty({kStepsADraw, kRows, kLatent}).normal_(0.0, 1.0, own);
    const torch::Tensor second = torch::empty({kStepsADraw, kRows, kLatent}).normal_(0.0, 1.0, own);
    for (int s = 0; s < 6; ++s) {
      const torch::Tensor expected = (s < kStepsADraw ? first : second)[s % kStepsADraw];
      EXPECT_TRUE(same_bits(steps[static_cast<std::size_t>(s)][p], expected)) << "member " << p << ", step " << s;
    }
  }
  EXPECT_FALSE(same_bits(steps[0][0], steps[1][0]));
}

TEST(LatentDraws, OneStepADrawIsEachMembersDrawAtEachStep) {
  LatentDraws draws(generators({7, 8}), 1);
  const std::vector<torch::Tensor> steps = steps_of(draws, 2, 3);
  for (std::int64_t p = 0; p < 2; ++p) {
    at::Generator own = generator_on(torch::kCPU, static_cast<std::uint64_t>(p + 7));
    for (int s = 0; s < 3; ++s)
      EXPECT_TRUE(same_bits(steps[static_cast<std::size_t>(s)][p],
                            torch::empty({kRows, kLatent}).normal_(0.0, 1.0, own)))
          << "member " << p << ", step " << s;
  }
}

// Members of one cell share its stream, and so do its G and D stacks:
// each refill draws member after member, in the order the steps come.
TEST(LatentDraws, MembersSharingAGeneratorDrawInTurn) {
  const at::Generator shared = generator_on(torch::kCPU, 9);
  LatentDraws g_stack({shared, shared}, 2);
  LatentDraws d_stack({shared}, 2);
  torch::Tensor g_z = torch::empty({2, kRows, kLatent}), d_z = torch::empty({1, kRows, kLatent});
  std::vector<torch::Tensor> g_steps, d_steps;
  for (int s = 0; s < 3; ++s) {  // G, D, G, D, G, D: refills G at 0 and 2, D at 0 and 2
    g_stack.next(g_z);
    g_steps.push_back(g_z.clone());
    d_stack.next(d_z);
    d_steps.push_back(d_z.clone());
  }
  at::Generator own = generator_on(torch::kCPU, 9);
  const auto draw = [&own] { return torch::empty({2, kRows, kLatent}).normal_(0.0, 1.0, own); };
  const torch::Tensor g0 = draw(), g1 = draw(), d0 = draw(), g0_next = draw(), g1_next = draw(), d0_next = draw();
  for (int s = 0; s < 2; ++s) {
    EXPECT_TRUE(same_bits(g_steps[static_cast<std::size_t>(s)][0], g0[s])) << "step " << s;
    EXPECT_TRUE(same_bits(g_steps[static_cast<std::size_t>(s)][1], g1[s])) << "step " << s;
    EXPECT_TRUE(same_bits(d_steps[static_cast<std::size_t>(s)][0], d0[s])) << "step " << s;
  }
  EXPECT_TRUE(same_bits(g_steps[2][0], g0_next[0]));
  EXPECT_TRUE(same_bits(g_steps[2][1], g1_next[0]));
  EXPECT_TRUE(same_bits(d_steps[2][0], d0_next[0]));
}

TEST(LatentDraws, AMembersValuesDoNotDependOnTheOtherMembers) {
  for (const std::int64_t steps_a_draw : {1, 3}) {
    LatentDraws alone(generators({2}), steps_a_draw);
    LatentDraws stacked(generators({1, 2, 3}), steps_a_draw);
    const std::vector<torch::Tensor> a = steps_of(alone, 1, 5);
    const std::vector<torch::Tensor> b = steps_of(stacked, 3, 5);
    for (std::size_t s = 0; s < a.size(); ++s)
      EXPECT_TRUE(same_bits(a[s][0], b[s][1])) << steps_a_draw << " steps a draw, step " << s;
  }
}

}  // namespace
}  // namespace cellgan
