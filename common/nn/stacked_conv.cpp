// A 2-d convolution for P members at once, as a grouped convolution
// (stacked_conv.h).
#include "common/nn/stacked_conv.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cellgan {
namespace {

constexpr std::int64_t kMinChannels = 8;

}  // namespace

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

StackedConv2dImpl::StackedConv2dImpl(std::int64_t members, StackedConvGeometry geometry)
    : members_(members), geometry_(geometry) {
  const StackedConvGeometry& g = geometry_;
  if (members < 1 || g.in < 1 || g.out < 1 || g.kernel < 1 || g.stride < 1 || g.padding < 0)
    throw std::invalid_argument(fmt::format("StackedConv2d: members, channels, kernel and stride must be >= 1 (got "
                                            "{}, {}, {}, {}, {})",
                                            members, g.in, g.out, g.kernel, g.stride));
  const double bound = 1.0 / std::sqrt(static_cast<double>(g.in * g.kernel * g.kernel));
  weight = register_parameter("weight",
                              torch::empty({members, g.out, g.in, g.kernel, g.kernel}).uniform_(-bound, bound));
  bias = register_parameter("bias", torch::empty({members, g.out}).uniform_(-bound, bound));
}

torch::Tensor StackedConv2dImpl::forward_with(const torch::Tensor& x, const torch::Tensor& w) {
  const StackedConvGeometry& g = geometry_;
  if (x.dim() != 4 || x.size(1) != members_ * g.in)
    throw std::invalid_argument(fmt::format("StackedConv2d::forward: expected a [B, {}, H, W] tensor, got [{}]",
                                            members_ * g.in, fmt::join(x.sizes(), ", ")));
  if (w.sizes() != weight.sizes())
    throw std::invalid_argument("StackedConv2d::forward_with: the weight's sizes differ from the layer's");
  const std::int64_t in = g.in < kMinChannels ? kMinChannels : g.in;
  const std::int64_t out = g.out < kMinChannels ? kMinChannels : g.out;
  if (in == g.in && out == g.out)
    return torch::conv2d(x, w.reshape({members_ * g.out, g.in, g.kernel, g.kernel}), bias.reshape({members_ * g.out}),
                         /*stride=*/{g.stride, g.stride}, /*padding=*/{g.padding, g.padding}, /*dilation=*/{1, 1},
                         /*groups=*/members_);
  // Few channels: zero channels up to kMinChannels, and a zero member when
  // alone (see the header).
  const std::int64_t groups = std::max<std::int64_t>(members_, 2);
  const std::int64_t b = x.size(0);
  const torch::Tensor input =
      torch::constant_pad_nd(x.view({b, members_, g.in, x.size(2), x.size(3)}),
                             {0, 0, 0, 0, 0, in - g.in, 0, groups - members_})
          .view({b, groups * in, x.size(2), x.size(3)});
  const torch::Tensor kernel =
      torch::constant_pad_nd(w, {0, 0, 0, 0, 0, in - g.in, 0, out - g.out, 0, groups - members_});
  const torch::Tensor shift = torch::constant_pad_nd(bias, {0, out - g.out, 0, groups - members_});
  const torch::Tensor y = torch::conv2d(input, kernel.reshape({groups * out, in, g.kernel, g.kernel}),
                                        shift.reshape({groups * out}), /*stride=*/{g.stride, g.stride},
                                        /*padding=*/{g.padding, g.padding}, /*dilation=*/{1, 1}, /*groups=*/groups);
  return y.view({b, groups, out, y.size(2), y.size(3)})
      .narrow(1, 0, members_)
      .narrow(2, 0, g.out)
      .reshape({b, members_ * g.out, y.size(2), y.size(3)});
}

std::vector<StackedTensor> StackedConv2dImpl::tensors() const {
  const StackedConvGeometry& g = geometry_;
  return {StackedTensor{weight, {g.out, g.in, g.kernel, g.kernel}}, StackedTensor{bias, {g.out}}};
}

}  // namespace cellgan
