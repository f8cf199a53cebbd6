// Discriminator penalties per member (see stacked_penalties.h).
#include "common/nn/stacked_penalties.h"

#include <torch/torch.h>

namespace cellgan {

torch::Tensor stacked_input_gradient(const torch::Tensor& d_x, const torch::Tensor& x) {
  return torch::autograd::grad({d_x.sum()}, {x}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                               /*create_graph=*/true)[0];
}

torch::Tensor stacked_r1_penalty(const torch::Tensor& d_real, const torch::Tensor& real, double gamma) {
  return (gamma / 2.0) * stacked_input_gradient(d_real, real).square().sum(2).mean(1);
}

torch::Tensor stacked_gradient_penalty(StackedMembers& d, const torch::Tensor& real, const torch::Tensor& fake,
                                       const torch::Tensor& share, double lambda) {
  const torch::Tensor e = share.to(real.device());
  const torch::Tensor x = (e * real.detach() + (1.0 - e) * fake.detach()).requires_grad_(true);
  const torch::Tensor grad = stacked_input_gradient(d.forward(x), x);
  return lambda * (grad.norm(/*p=*/2, /*dim=*/2) - 1.0).square().mean(1);
}

}  // namespace cellgan
