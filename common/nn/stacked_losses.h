// GAN losses per member of a stack (docs/architecture.md, "Stacked
// networks"): the losses of losses.h, each mean taken over one member's
// rows, on stacked discriminator outputs [P, B, 1].
//
// per_member[p] is the loss member p would have alone (losses.h on its
// [B, 1] rows); total is their sum, the one tensor to call backward() on:
// since a member's loss depends on its own rows only, each member's
// parameters receive the gradient of their own loss.
//
// All members use one loss kind (resolved: not kMustangs) and one BCE
// form. Per-member kinds (mustangs) are a later step: they need each
// member's loss picked without letting an unpicked kind's infinite slope
// reach the gradient.
//
// Thread-safety: pure functions.
#pragma once

#include <torch/types.h>

#include "common/config.h"

namespace cellgan {

struct MemberLosses {
  torch::Tensor per_member;  // [P]
  torch::Tensor total;       // scalar: per_member.sum()
};

// d_fake: [P, B, 1]; std::invalid_argument on other shapes.
MemberLosses stacked_generator_loss(LossKind kind, const torch::Tensor& d_fake, BceForm form = BceForm::kClamped);
// d_real, d_fake: [P, B, 1] with the same P.
MemberLosses stacked_discriminator_loss(LossKind kind, const torch::Tensor& d_real, const torch::Tensor& d_fake,
                                        BceForm form = BceForm::kClamped);

}  // namespace cellgan
