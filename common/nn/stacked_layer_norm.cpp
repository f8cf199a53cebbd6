// Layer normalisation per member (stacked_layer_norm.h).
// (stacked_layer_norm.h).
#include "common/nn/stacked_layer_norm.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace cellgan {
namespace {

constexpr double kEps = 1e-5;  // torch::nn::LayerNormOptions' default

}  // namespace

StackedLayerNormImpl::StackedLayerNormImpl(std::int64_t members, std::vector<std::int64_t> member_sizes)
    : members_(members), member_sizes_(std::move(member_sizes)) {
  if (members < 1 || member_sizes_.size() != 3)
    throw std::invalid_argument("StackedLayerNorm: at least one member, and a [C, H, W] shape to normalise");
  std::vector<std::int64_t> sizes{members};
  sizes.insert(sizes.end(), member_sizes_.begin(), member_sizes_.end());
  weight = register_parameter("weight", torch::ones(sizes));
  bias = register_parameter("bias", torch::zeros(sizes));
}

torch::Tensor StackedLayerNormImpl::forward(const torch::Tensor& x) {
  if (x.dim() != 5 || x.size(0) != members_ || x.size(2) != member_sizes_[0] || x.size(3) != member_sizes_[1] ||
      x.size(4) != member_sizes_[2])
    throw std::invalid_argument(fmt::format("StackedLayerNorm::forward: expected a [{}, B, {}] tensor, got [{}]",
                                            members_, fmt::join(member_sizes_, ", "), fmt::join(x.sizes(), ", ")));
  const std::int64_t n = member_sizes_[0] * member_sizes_[1] * member_sizes_[2];
  // [P, B, n]: one row per member and sample.
  const torch::Tensor normalised = torch::layer_norm(x.reshape({members_, x.size(1), n}), {n}, {}, {}, kEps);
  return (normalised * weight.view({members_, 1, n}) + bias.view({members_, 1, n})).view(x.sizes());
}

torch::Tensor StackedLayerNormImpl::member_forward(const torch::Tensor& x, const torch::Tensor& w,
                                                  const torch::Tensor& b) const {
  const std::int64_t n = w.numel();
  const torch::Tensor normalised = torch::layer_norm(x.reshape({x.size(0), n}), {n}, {}, {}, kEps);
  return (normalised * w.view({1, n}) + b.view({1, n})).view(x.sizes());
}

std::vector<StackedTensor> StackedLayerNormImpl::tensors() const {
  return {StackedTensor{weight, member_sizes_}, StackedTensor{bias, member_sizes_}};
}

}  // namespace cellgan
