// The discriminator's training loss with the optional R1 penalty
// (discriminator_step.h).
//
// Thread-safety: see the header.
#include "common/nn/discriminator_step.h"

#include <torch/torch.h>

#include "common/nn/losses.h"

namespace cellgan {

torch::Tensor r1_penalty(const torch::Tensor& d_real, const torch::Tensor& real, double gamma) {
  const torch::Tensor grad = torch::autograd::grad({d_real.sum()}, {real}, /*grad_outputs=*/{},
                                                   /*retain_graph=*/true, /*create_graph=*/true)[0];
  return (gamma / 2.0) * grad.square().sum(/*dim=*/1).mean();
}

torch::Tensor discriminator_step_loss(Discriminator& d, LossKind kind, const torch::Tensor& real,
                                      const torch::Tensor& fake, double r1_gamma) {
  if (r1_gamma <= 0.0) return discriminator_loss(kind, d->forward(real), d->forward(fake));
  const torch::Tensor real_leaf = real.detach().requires_grad_(true);
  const torch::Tensor d_real = d->forward(real_leaf);
  return discriminator_loss(kind, d_real, d->forward(fake)) + r1_penalty(d_real, real_leaf, r1_gamma);
}

}  // namespace cellgan
