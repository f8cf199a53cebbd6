// The loss a discriminator trains on in one step: the loss of its kind on a
// real and a fake batch (losses.h), plus its penalty:
//
// - when penalties.r1_gamma > 0 (training.r1_penalty), the R1 gradient
//   penalty on the real batch (Mescheder et al., 2018),
//     (gamma / 2) * mean over the batch of ||d D(x) / d x||^2,
//   taken on D's output in (0, 1);
// - for wgan_gp, the gradient penalty (Gulrajani et al., 2017) with
//   lambda = penalties.gp_lambda (training.gp_lambda),
//     lambda * mean over the batch of (||d D(x^) / d x^||_2 - 1)^2,
//   on the interpolates x^ = e * real + (1 - e) * fake, one e ~ U[0, 1) per
//   row drawn from Torch's global generator (the caller seeds it, as for
//   its latent vectors), so a seeded run stays deterministic.
//
// Both are built with create_graph (double backward), so that their
// gradient reaches D's parameters. Without a penalty (gamma = 0, not
// wgan_gp, or lambda = 0) the result is exactly discriminator_loss(kind,
// D(real), D(fake)), the same graph as without this header, and nothing is
// drawn.
//
// The bare benchmark loop trains with this, and the tests take it as the
// reference of the stacked penalties (stacked_penalties.h), which the cell
// trainer and the data_parallel replica train with.
//
// Thread-safety: uses `d` (and Torch's global generator, for wgan_gp) on
// the calling thread.
#pragma once

#include <torch/types.h>

#include "common/config.h"
#include "common/nn/networks.h"

namespace cellgan {

struct DiscriminatorPenalties {
  double r1_gamma = 0.0;    // >= 0; 0 = no R1 penalty; not with wgan_gp
  double gp_lambda = 10.0;  // >= 0; wgan_gp only
  BceForm bce = BceForm::kClamped;  // the loss's BCE form (losses.h), not a penalty; bce and heuristic only
};

inline DiscriminatorPenalties discriminator_penalties(const TrainingConfig& training) {
  return {training.r1_penalty, training.gp_lambda, training.bce};
}

// `kind` is resolved (not kMustangs); `real` and `fake` are [N, data_dim]
// batches of the same N (`fake` detached from its generator).
torch::Tensor discriminator_step_loss(Discriminator& d, LossKind kind, const torch::Tensor& real,
                                      const torch::Tensor& fake, const DiscriminatorPenalties& penalties);

// The same with the R1 penalty only; throws std::invalid_argument for
// wgan_gp, which needs its lambda (use the overload above).
torch::Tensor discriminator_step_loss(Discriminator& d, LossKind kind, const torch::Tensor& real,
                                      const torch::Tensor& fake, double r1_gamma);

// The R1 term alone: (gamma / 2) * mean ||grad_x D(x)||^2 over the rows of
// `real`, where `d_real` = D(real) and `real` is a leaf that requires grad.
torch::Tensor r1_penalty(const torch::Tensor& d_real, const torch::Tensor& real, double gamma);

// The WGAN-GP term at given points: lambda * mean (||grad D(x^)||_2 - 1)^2
// over the rows of `interpolates`, where `d_interpolates` = D(interpolates)
// and `interpolates` is a leaf that requires grad.
torch::Tensor gradient_penalty_at(const torch::Tensor& d_interpolates, const torch::Tensor& interpolates,
                                  double lambda);

// The WGAN-GP term on random interpolates of `real` and `fake` (drawn as
// described above).
torch::Tensor gradient_penalty(Discriminator& d, const torch::Tensor& real, const torch::Tensor& fake, double lambda);

}  // namespace cellgan
