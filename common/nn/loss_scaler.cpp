// The fp16 loss scale (see loss_scaler.h).
#include "common/nn/loss_scaler.h"

#include <torch/torch.h>

namespace cellgan {

LossScaler::LossScaler(double initial, std::int64_t growth_interval)
    : scale_(initial), growth_interval_(growth_interval) {}

bool LossScaler::unscale(const std::vector<torch::Tensor>& gradients) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> finite;
  for (const torch::Tensor& g : gradients) {
    if (!g.defined()) continue;
    g.mul_(1.0 / scale_);
    finite.push_back(torch::isfinite(g).all());
  }
  return finite.empty() || torch::stack(finite).all().item<bool>();
}

void LossScaler::update(bool finite) {
  if (!finite) {
    scale_ *= 0.5;
    finite_in_a_row_ = 0;
    ++skipped_;
    return;
  }
  if (++finite_in_a_row_ >= growth_interval_) {
    scale_ *= 2.0;
    finite_in_a_row_ = 0;
  }
}

}  // namespace cellgan
