// GAN losses (docs/architecture.md, "One generation of one cell"). Inputs are discriminator outputs in (0, 1), except
// for wgan_gp, whose inputs are a critic's raw scores (networks.h,
// DiscriminatorOutput::kScore).
//
// - bce:       G: BCE(D(G(z)), 1) (non-saturating); D: BCE(D(x),1) + BCE(D(G(z)),0)
// - mse:       least squares on the sigmoid output: G: mean((D(G(z))-1)^2);
//              D: mean((D(x)-1)^2) + mean(D(G(z))^2)
// - heuristic: G: -1/2 * mean(log D(G(z))) (E-GAN); D: as bce
// - wgan_gp:   G: -mean(D(G(z))); D: mean(D(G(z))) - mean(D(x)), the
//              negated Wasserstein estimate. The gradient penalty of its
//              training step is added by discriminator_step.h, not here: this
//              is the loss fitness is measured by.
// - mustangs is not a loss of its own: each generator draws one of bce,
//   mse and heuristic (draw_mustangs_loss), and its discriminator uses bce
//   when heuristic is drawn. Callers resolve kMustangs before calling these
//   functions. It never draws wgan_gp: a critic's scores are not
//   probabilities, so a critic cannot pair with the other losses.
//
// BCE's logs (bce, and the discriminator side of heuristic) take one of two
// forms (training.bce): kClamped, log max(p, 1e-8), finite for a saturated D
// but with no gradient below 1e-8; kPyTorch, PyTorch's BCELoss, whose log is
// clamped at -100 and whose gradient (p - y) / max(p(1 - p), 1e-12) never
// vanishes. heuristic's generator log is always the clamped one. The
// functions' default is kClamped (the unit tests' hand-worked values);
// training passes training.bce, whose default is kPyTorch.
//
// Inputs of bf16 or fp16 (a forward pass under autocast, precision.h) are
// widened to float32 first: losses are always taken in float32.
//
// Thread-safety: pure functions.
#pragma once

#include <torch/types.h>

#include "common/config.h"
#include "common/rng.h"

namespace cellgan {

torch::Tensor generator_loss(LossKind kind, const torch::Tensor& d_fake, BceForm form = BceForm::kClamped);
torch::Tensor discriminator_loss(LossKind kind, const torch::Tensor& d_real, const torch::Tensor& d_fake,
                                 BceForm form = BceForm::kClamped);

// Over what the losses' means are taken: the whole batch (one network, a
// scalar loss), or each member's rows of a stack (inputs [P, B, 1], a loss
// per member [P]; stacked_losses.h). The formulas are the same.
// kPerMemberInFixedOrder is kPerMember with each member's sum taken by
// elementwise adds in an order set by its row count alone
// (fixed_order_member_means), so that on any device its bits do not depend
// on P; a few kernels more (about log2 of the rows each).
enum class LossMean { kWhole, kPerMember, kPerMemberInFixedOrder };
torch::Tensor generator_loss(LossKind kind, const torch::Tensor& d_fake, BceForm form, LossMean mean);
torch::Tensor discriminator_loss(LossKind kind, const torch::Tensor& d_real, const torch::Tensor& d_fake,
                                 BceForm form, LossMean mean);

// The loss a discriminator pairs with a generator's loss kind.
inline LossKind discriminator_loss_for(LossKind generator_kind) {
  return generator_kind == LossKind::kHeuristic ? LossKind::kBce : generator_kind;
}

// One of bce, mse, heuristic, uniformly, from `rng`.
LossKind draw_mustangs_loss(SplitMix64& rng);

}  // namespace cellgan
