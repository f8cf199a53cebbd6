// Per-member losses: each member's loss and gradient are those of losses.h
// on its rows alone.
#include "common/nn/stacked_losses.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/nn/losses.h"
#include "common/nn/stacked_tensor.h"
#include "tests/nn/stacked_members.h"

namespace cellgan {
namespace {

using test::same_bits;

// Outputs in (0, 1), some saturated, for P = 4 members of batch 64.
torch::Tensor outputs(std::uint64_t seed) {
  torch::manual_seed(seed);
  torch::Tensor d = torch::rand({4, 64, 1});
  d[1][3][0] = 0.0F;  // saturated: the clamps matter
  d[2][5][0] = 1.0F;
  return d;
}

void expect_member_losses(LossKind kind, BceForm form) {
  const torch::Tensor real = outputs(1).requires_grad_(true);
  const torch::Tensor fake = outputs(2).requires_grad_(true);
  const MemberLosses g = stacked_generator_loss(kind, fake, form);
  const MemberLosses d = stacked_discriminator_loss(kind, real, fake, form);
  const torch::Tensor g_fake = torch::autograd::grad({g.total}, {fake})[0];
  const auto d_grads = torch::autograd::grad({d.total}, {real, fake});
  EXPECT_TRUE(same_bits(g.total, g.per_member.sum()));
  for (int p = 0; p < 4; ++p) {
    const torch::Tensor r = real[p].detach().requires_grad_(true);
    const torch::Tensor f = fake[p].detach().requires_grad_(true);
    const torch::Tensor g_alone = generator_loss(kind, f, form);
    const torch::Tensor d_alone = discriminator_loss(kind, r, f, form);
    EXPECT_TRUE(same_bits(g.per_member[p], g_alone)) << "member " << p;
    EXPECT_TRUE(same_bits(d.per_member[p], d_alone)) << "member " << p;
    EXPECT_TRUE(same_bits(g_fake[p], torch::autograd::grad({g_alone}, {f})[0])) << "member " << p;
    const auto alone = torch::autograd::grad({d_alone}, {r, f});
    EXPECT_TRUE(same_bits(d_grads[0][p], alone[0])) << "member " << p;
    EXPECT_TRUE(same_bits(d_grads[1][p], alone[1])) << "member " << p;
  }
}

TEST(StackedLosses, EachMemberHasItsOwnLossAndGradient) {
  for (const BceForm form : {BceForm::kPyTorch, BceForm::kClamped}) {
    for (const LossKind kind : {LossKind::kBce, LossKind::kMse, LossKind::kHeuristic, LossKind::kWganGp}) {
      SCOPED_TRACE(std::string(to_string(kind)) + (form == BceForm::kPyTorch ? " pytorch" : " clamped"));
      expect_member_losses(kind, form);
    }
  }
}

// Members of different kinds (mustangs): each member's loss is also kept in
// the graph (fp16 scales it on its own), with the values of per_member and
// the gradient of total.
TEST(StackedLosses, EachMembersLossOfMixedKindsIsAlsoInTheGraph) {
  torch::manual_seed(4);
  const torch::Tensor d = torch::rand({3, 5, 1}).clamp(0.05, 0.95).requires_grad_(true);
  const std::vector<LossKind> kinds = {LossKind::kBce, LossKind::kMse, LossKind::kBce};
  const MemberLosses l = losses_by_kind(kinds, torch::kCPU, [&](LossKind k, const torch::Tensor& rows) {
    return generator_loss(k, rows_of(d, rows), BceForm::kPyTorch, LossMean::kPerMember);
  });
  EXPECT_TRUE(torch::equal(l.attached.detach(), l.per_member));
  const torch::Tensor by_total = torch::autograd::grad({l.total}, {d}, {}, /*retain_graph=*/true)[0];
  const torch::Tensor by_member = torch::autograd::grad({l.attached.sum()}, {d})[0];
  EXPECT_TRUE(torch::equal(by_total, by_member));
}

// A member's mean summed in a fixed order has the same bits whichever
// members are stacked with it, is the mean to rounding, carries NaN and
// infinities, and has the gradient 1/n; the losses taken with it are the
// ordinary per-member losses to rounding.
TEST(StackedLosses, AMembersMeanInFixedOrderDoesNotDependOnItsStack) {
  torch::manual_seed(6);
  for (const std::int64_t n : {1, 64, 1000}) {
    SCOPED_TRACE("rows " + std::to_string(n));
    const torch::Tensor x = torch::randn({17, n, 1}).requires_grad_(true);
    const torch::Tensor means = fixed_order_member_means(x);
    ASSERT_EQ(means.sizes(), torch::IntArrayRef({17}));
    EXPECT_TRUE(torch::allclose(means, x.flatten(1).mean(1), 1e-5, 1e-6));
    for (const std::int64_t p : {0, 8, 16}) {
      EXPECT_TRUE(same_bits(fixed_order_member_means(x.narrow(0, p, 1))[0], means[p])) << "member " << p;
      const std::int64_t from = std::max<std::int64_t>(0, p - 1);
      EXPECT_TRUE(same_bits(fixed_order_member_means(x.narrow(0, from, 2))[p - from], means[p])) << "member " << p;
    }
    const torch::Tensor grad = torch::autograd::grad({means.sum()}, {x})[0];
    EXPECT_TRUE(torch::equal(grad, torch::full_like(grad, 1.0F / static_cast<float>(n))));
  }
  // The order is the halves': ((a + e) + c) + (b + d) for five values,
  // here 2 where the exact sum is 2.5 and a sum left to right 1.5.
  const torch::Tensor order = torch::tensor({1e8F, 1.0F, -1e8F, 1.0F, 0.5F}).view({1, 5});
  EXPECT_EQ(fixed_order_member_means(order).item<float>(), 2.0F / 5.0F);
  torch::Tensor bad = torch::rand({3, 100});
  bad[0][7] = std::numeric_limits<float>::quiet_NaN();
  bad[2][99] = std::numeric_limits<float>::infinity();
  const torch::Tensor m = fixed_order_member_means(bad);
  EXPECT_TRUE(std::isnan(m[0].item<float>()));
  EXPECT_TRUE(std::isfinite(m[1].item<float>()));
  EXPECT_EQ(m[2].item<float>(), std::numeric_limits<float>::infinity());
  EXPECT_THROW(fixed_order_member_means(torch::tensor(1.0F)), std::invalid_argument);

  const torch::Tensor real = outputs(1), fake = outputs(2);
  for (const LossKind kind : {LossKind::kBce, LossKind::kMse, LossKind::kHeuristic, LossKind::kWganGp}) {
    SCOPED_TRACE(to_string(kind));
    for (const BceForm form : {BceForm::kPyTorch, BceForm::kClamped}) {
      EXPECT_TRUE(torch::allclose(generator_loss(kind, fake, form, LossMean::kPerMemberInFixedOrder),
                                  generator_loss(kind, fake, form, LossMean::kPerMember), 1e-5, 1e-6));
      EXPECT_TRUE(torch::allclose(discriminator_loss(kind, real, fake, form, LossMean::kPerMemberInFixedOrder),
                                  discriminator_loss(kind, real, fake, form, LossMean::kPerMember), 1e-5, 1e-6));
    }
  }
}

TEST(StackedLosses, RefusesUnstackedShapes) {
  EXPECT_THROW(stacked_generator_loss(LossKind::kBce, torch::rand({64, 1})), std::invalid_argument);
  EXPECT_THROW(stacked_discriminator_loss(LossKind::kBce, torch::rand({2, 8, 1}), torch::rand({3, 8, 1})),
               std::invalid_argument);
  EXPECT_THROW(stacked_generator_loss(LossKind::kMustangs, torch::rand({2, 8, 1})), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
