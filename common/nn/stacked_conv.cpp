// A 2-d convolution for P members at once: a grouped convolution on CUDA,
// each member's own on the CPU (stacked_conv.h).
#include "common/nn/stacked_conv.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cmath>
#include <stdexcept>

namespace cellgan {
torch::Tensor to_grouped(const torch::Tensor& x) {
  if (x.dim() != 5) throw std::invalid_argument(fmt::format("to_grouped: expected [P, B, C, H, W], got [{}]",
                                                            fmt::join(x.sizes(), ", ")));
  return x.transpose(0, 1).reshape({x.size(1), x.size(0) * x.size(2), x.size(3), x.size(4)});
}

torch::Tensor from_grouped(const torch::Tensor& x, std::int64_t members) {
  if (x.dim() != 4 || members < 1 || x.size(1) % members != 0)
    throw std::invalid_argument(fmt::format("from_grouped: expected [B, {} * C, H, W], got [{}]", members,
                                            fmt::join(x.sizes(), ", ")));
  return x.view({x.size(0), members, x.size(1) / members, x.size(2), x.size(3)}).transpose(0, 1).contiguous();
}

StackedConv2dImpl::StackedConv2dImpl(std::int64_t members, Conv2dGeometry geometry, InitialWeights weights)
    : members_(members), geometry_(geometry) {
  const Conv2dGeometry& g = geometry_;
  if (members < 1 || g.in < 1 || g.out < 1 || g.kernel < 1 || g.stride < 1 || g.padding < 0)
    throw std::invalid_argument(fmt::format("StackedConv2d: members, channels, kernel and stride must be >= 1 (got "
                                            "{}, {}, {}, {}, {})",
                                            members, g.in, g.out, g.kernel, g.stride));
  weight = register_parameter("weight", torch::empty({members, g.out, g.in, g.kernel, g.kernel}));
  bias = register_parameter("bias", torch::empty({members, g.out}));
  if (weights == InitialWeights::kUndrawn) return;
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(g.in * g.kernel * g.kernel));
  weight.uniform_(-bound, bound);
  bias.uniform_(-bound, bound);
}

torch::Tensor StackedConv2dImpl::forward_with(const torch::Tensor& x, const torch::Tensor& w) {
  const Conv2dGeometry& g = geometry_;
  if (x.dim() != 5 || x.size(0) != members_ || x.size(2) != g.in)
    throw std::invalid_argument(fmt::format("StackedConv2d::forward: expected a [{}, B, {}, H, W] tensor, got [{}]",
                                            members_, g.in, fmt::join(x.sizes(), ", ")));
  if (w.sizes() != weight.sizes())
    throw std::invalid_argument("StackedConv2d::forward_with: the weight's sizes differ from the layer's");
  const std::vector<std::int64_t> stride{g.stride, g.stride};
  const std::vector<std::int64_t> padding{g.padding, g.padding};
  const std::vector<std::int64_t> dilation{1, 1};
  if (x.is_cuda()) {
    const torch::Tensor y =
        torch::conv2d(to_grouped(x), w.reshape({members_ * g.out, g.in, g.kernel, g.kernel}),
                      bias.reshape({members_ * g.out}), stride, padding, dilation, /*groups=*/members_);
    return from_grouped(y, members_);
  }
  // The CPU: each member's own convolution (see the header). unbind and
  // stack, whose backward passes are one stack and one unbind.
  const std::vector<torch::Tensor> inputs = x.unbind(0);
  const std::vector<torch::Tensor> weights = w.unbind(0);
  const std::vector<torch::Tensor> biases = bias.unbind(0);
  std::vector<torch::Tensor> outputs;
  for (std::int64_t p = 0; p < members_; ++p) outputs.push_back(member_forward(inputs[p], weights[p], biases[p]));
  return torch::stack(outputs);
}

torch::Tensor StackedConv2dImpl::member_forward(const torch::Tensor& x, const torch::Tensor& w,
                                                const torch::Tensor& b) const {
  const Conv2dGeometry& g = geometry_;
  return torch::conv2d(x.contiguous(), w, b, /*stride=*/{g.stride, g.stride}, /*padding=*/{g.padding, g.padding});
}

std::vector<StackedTensor> StackedConv2dImpl::tensors() const {
  const Conv2dGeometry& g = geometry_;
  return {StackedTensor{weight, {g.out, g.in, g.kernel, g.kernel}}, StackedTensor{bias, {g.out}}};
}

}  // namespace cellgan
