// The discriminator penalties of discriminator_step.h per member of a
// stack (docs/architecture.md, "Stacked networks"), on stacked inputs
// [P, B, in] and outputs [P, B, 1]: member p's term is the one its network
// alone would take on its rows. Both keep their graph (create_graph) so
// that their gradient reaches the discriminators' parameters.
//
// Thread-safety: pure functions over the caller's tensors and stack.
#pragma once

#include <torch/types.h>

#include "common/nn/stacked_networks.h"

namespace cellgan {

// d D / d x at `x` (a leaf that requires grad), `d_x` = D(x), kept in the
// graph for a second backward pass. With `loss_scales` ([P] float32, fp16's
// per member, stacked_loss_scaler.h) the backward pass runs on d_x times
// each member's scale and the gradient is divided by it after, so that
// small input gradients do not underflow in 16 bits (autocast's recipe for
// gradient penalties); with a power of two the result is the same bits.
torch::Tensor stacked_input_gradient(const torch::Tensor& d_x, const torch::Tensor& x,
                                     const torch::Tensor& loss_scales = {});

// R1, [P]: (gamma / 2) * mean over a member's rows of ||d D(x) / d x||^2,
// where `d_real` = D(real) and `real` is a leaf that requires grad.
// `loss_scales` as for stacked_input_gradient().
torch::Tensor stacked_r1_penalty(const torch::Tensor& d_real, const torch::Tensor& real, double gamma,
                                 const torch::Tensor& loss_scales = {});

// WGAN-GP, [P]: lambda * mean over a member's rows of (||d D(x^) / d x^||_2 - 1)^2
// on the interpolates x^ = e * real + (1 - e) * fake, with e = `share`
// ([P, B, 1], any device) and `d` the discriminators.
torch::Tensor stacked_gradient_penalty(StackedMembers& d, const torch::Tensor& real, const torch::Tensor& fake,
                                       const torch::Tensor& share, double lambda);

}  // namespace cellgan
