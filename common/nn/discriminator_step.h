// The loss a discriminator trains on in one step: the loss of its kind on a
// real and a fake batch (losses.h), plus, when training.r1_penalty > 0, the
// R1 gradient penalty on the real batch (Mescheder et al., 2018):
//
//   (gamma / 2) * mean over the batch of ||d D(x) / d x||^2
//
// taken on D's output in (0, 1) and built with create_graph, so that its
// gradient reaches D's parameters. With gamma = 0 the result is exactly
// discriminator_loss(kind, D(real), D(fake)), the same graph as without it.
//
// The cell trainer and the bare benchmark loop both train with this.
//
// Thread-safety: uses `d` on the calling thread.
#pragma once

#include <torch/types.h>

#include "common/config.h"
#include "common/nn/networks.h"

namespace cellgan {

// `kind` is resolved (not kMustangs); `real` and `fake` are [N, data_dim]
// batches (`fake` detached from its generator); gamma >= 0.
torch::Tensor discriminator_step_loss(Discriminator& d, LossKind kind, const torch::Tensor& real,
                                      const torch::Tensor& fake, double r1_gamma);

// The R1 term alone: (gamma / 2) * mean ||grad_x D(x)||^2 over the rows of
// `real`, where `d_real` = D(real) and `real` is a leaf that requires grad.
torch::Tensor r1_penalty(const torch::Tensor& d_real, const torch::Tensor& real, double gamma);

}  // namespace cellgan
