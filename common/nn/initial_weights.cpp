// Putting a network on its device (initial_weights.h).
#include "common/nn/initial_weights.h"

#include <torch/torch.h>

namespace cellgan {

void place_on_device(torch::nn::Module& module, const c10::Device& device, bool values) {
  if (values) {
    module.to(device);  // copies nothing already there
    return;
  }
  torch::NoGradGuard no_grad;
  for (torch::Tensor& t : module.parameters())
    if (t.device() != device) t.set_data(torch::empty_like(t, t.options().device(device)));
  for (torch::Tensor& t : module.buffers())
    if (t.device() != device) t.set_data(torch::empty_like(t, t.options().device(device)));
}

}  // namespace cellgan
