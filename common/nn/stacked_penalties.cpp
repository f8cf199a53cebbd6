// Discriminator penalties per member (see stacked_penalties.h).
#include "common/nn/stacked_penalties.h"

#include <torch/torch.h>

#include "common/nn/stacked_tensor.h"

namespace cellgan {

torch::Tensor stacked_input_gradient(const torch::Tensor& d_x, const torch::Tensor& x, const torch::Tensor& loss_scales) {
  const torch::Tensor out = loss_scales.defined() ? d_x * per_member(loss_scales, d_x) : d_x;
  const torch::Tensor grad =
      torch::autograd::grad({out.sum()}, {x}, /*grad_outputs=*/{}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  return loss_scales.defined() ? grad / per_member(loss_scales, grad) : grad;
}

torch::Tensor stacked_r1_penalty(const torch::Tensor& d_real, const torch::Tensor& real, double gamma,
                                 const torch::Tensor& loss_scales) {
  return (gamma / 2.0) * stacked_input_gradient(d_real, real, loss_scales).square().sum(2).mean(1);
}

torch::Tensor stacked_gradient_penalty(StackedMembers& d, const torch::Tensor& real, const torch::Tensor& fake,
                                       const torch::Tensor& share, double lambda) {
  const torch::Tensor e = share.to(real.device());
  const torch::Tensor x = (e * real.detach() + (1.0 - e) * fake.detach()).requires_grad_(true);
  const torch::Tensor grad = stacked_input_gradient(d.forward(x), x);
  return lambda * (grad.norm(/*p=*/2, /*dim=*/2) - 1.0).square().mean(1);
}

}  // namespace cellgan
