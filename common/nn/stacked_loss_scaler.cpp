// fp16's loss scale per stacked member (see stacked_loss_scaler.h).
#include "common/nn/stacked_loss_scaler.h"

#include <torch/torch.h>

#include "common/nn/stacked_tensor.h"

namespace cellgan {

StackedLossScaler::StackedLossScaler(std::int64_t members, const torch::Device& device, double initial)
    : scale_(torch::full({members}, initial, torch::TensorOptions().device(device).dtype(torch::kFloat32))),
      skipped_(torch::zeros({members}, torch::TensorOptions().device(device).dtype(torch::kInt64))) {}

torch::Tensor StackedLossScaler::scaled(const torch::Tensor& per_member) const {
  return (per_member * scale_).sum();
}

torch::Tensor StackedLossScaler::unscale(const std::vector<torch::Tensor>& gradients) const {
  torch::NoGradGuard no_grad;
  torch::Tensor finite = torch::ones_like(scale_, torch::kBool);
  for (const torch::Tensor& g : gradients) {
    if (!g.defined()) continue;
    g.div_(per_member(scale_, g));
    finite = finite.logical_and(torch::isfinite(g).reshape({g.size(0), -1}).all(1));
  }
  return finite;
}

void StackedLossScaler::update(const torch::Tensor& finite) {
  torch::NoGradGuard no_grad;
  scale_.copy_(torch::where(finite, scale_, scale_ * 0.5));
  skipped_.add_(finite.logical_not().to(torch::kInt64));
}

std::vector<std::int64_t> StackedLossScaler::skipped() const {
  const torch::Tensor host = skipped_.cpu().contiguous();
  return std::vector<std::int64_t>(host.data_ptr<std::int64_t>(), host.data_ptr<std::int64_t>() + host.numel());
}

}  // namespace cellgan
