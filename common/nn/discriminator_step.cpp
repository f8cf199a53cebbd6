// The discriminator's training loss with the optional R1 penalty or the
// WGAN-GP gradient penalty (discriminator_step.h).
//
// Thread-safety: see the header.
#include "common/nn/discriminator_step.h"

#include <torch/torch.h>

#include <stdexcept>

#include "common/nn/losses.h"

namespace cellgan {
namespace {

// d D / d x at `x` (a leaf), kept in the graph for a second backward.
torch::Tensor input_gradient(const torch::Tensor& d_x, const torch::Tensor& x) {
  return torch::autograd::grad({d_x.sum()}, {x}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                               /*create_graph=*/true)[0];
}

}  // namespace

torch::Tensor r1_penalty(const torch::Tensor& d_real, const torch::Tensor& real, double gamma) {
  return (gamma / 2.0) * input_gradient(d_real, real).square().sum(/*dim=*/1).mean();
}

torch::Tensor gradient_penalty_at(const torch::Tensor& d_interpolates, const torch::Tensor& interpolates,
                                  double lambda) {
  const torch::Tensor grad = input_gradient(d_interpolates, interpolates);
  return lambda * (grad.norm(/*p=*/2, /*dim=*/1) - 1.0).square().mean();
}

torch::Tensor gradient_penalty(Discriminator& d, const torch::Tensor& real, const torch::Tensor& fake, double lambda) {
  if (real.sizes() != fake.sizes())
    throw std::invalid_argument("gradient_penalty: the real and fake batches differ in shape");
  const torch::Tensor e = torch::rand({real.size(0), 1}, real.options());
  const torch::Tensor interpolates = (e * real.detach() + (1.0 - e) * fake.detach()).requires_grad_(true);
  return gradient_penalty_at(d->forward(interpolates), interpolates, lambda);
}

torch::Tensor discriminator_step_loss(Discriminator& d, LossKind kind, const torch::Tensor& real,
                                      const torch::Tensor& fake, const DiscriminatorPenalties& penalties) {
  if (kind == LossKind::kWganGp) {
    if (penalties.r1_gamma > 0.0)
      throw std::invalid_argument("discriminator_step_loss: wgan_gp takes no R1 penalty");
    const torch::Tensor loss = discriminator_loss(kind, d->forward(real), d->forward(fake));
    if (penalties.gp_lambda <= 0.0) return loss;
    return loss + gradient_penalty(d, real, fake, penalties.gp_lambda);
  }
  if (penalties.r1_gamma <= 0.0) return discriminator_loss(kind, d->forward(real), d->forward(fake), penalties.bce);
  const torch::Tensor real_leaf = real.detach().requires_grad_(true);
  const torch::Tensor d_real = d->forward(real_leaf);
  return discriminator_loss(kind, d_real, d->forward(fake), penalties.bce) +
         r1_penalty(d_real, real_leaf, penalties.r1_gamma);
}

torch::Tensor discriminator_step_loss(Discriminator& d, LossKind kind, const torch::Tensor& real,
                                      const torch::Tensor& fake, double r1_gamma) {
  if (kind == LossKind::kWganGp)
    throw std::invalid_argument(
        "discriminator_step_loss: wgan_gp needs its lambda: pass DiscriminatorPenalties (discriminator_penalties())");
  return discriminator_step_loss(d, kind, real, fake, DiscriminatorPenalties{r1_gamma, 0.0});
}

}  // namespace cellgan
