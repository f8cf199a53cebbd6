// Batch normalisation per member over the grouped layout
// (stacked_batch_norm.h).
#include "common/nn/stacked_batch_norm.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace cellgan {
namespace {

// torch::nn::BatchNormOptions' defaults.
constexpr double kMomentum = 0.1;
constexpr double kEps = 1e-5;

}  // namespace

StackedBatchNorm2dImpl::StackedBatchNorm2dImpl(std::int64_t members, std::int64_t channels)
    : members_(members), channels_(channels) {
  if (members < 1 || channels < 1)
    throw std::invalid_argument(
        fmt::format("StackedBatchNorm2d: members and channels must be >= 1 (got {}, {})", members, channels));
  weight = register_parameter("weight", torch::ones({members, channels}));
  bias = register_parameter("bias", torch::zeros({members, channels}));
  running_mean = register_buffer("running_mean", torch::zeros({members, channels}));
  running_var = register_buffer("running_var", torch::ones({members, channels}));
  num_batches_tracked = register_buffer("num_batches_tracked", torch::zeros({members}, torch::kLong));
}

torch::Tensor StackedBatchNorm2dImpl::forward(const torch::Tensor& x) {
  if (x.dim() != 4 || x.size(1) != members_ * channels_)
    throw std::invalid_argument(fmt::format("StackedBatchNorm2d::forward: expected a [B, {}, H, W] tensor, got [{}]",
                                            members_ * channels_, fmt::join(x.sizes(), ", ")));
  if (is_training()) {
    if (x.size(0) * x.size(2) * x.size(3) == 1)
      throw std::invalid_argument("StackedBatchNorm2d::forward: more than one value per channel needed in training");
    torch::NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  // The running statistics' views share their storage, so batch_norm
  // updates the stacked buffers in place.
  return torch::batch_norm(x, weight.view({-1}), bias.view({-1}), running_mean.view({-1}), running_var.view({-1}),
                           is_training(), kMomentum, kEps, at::globalContext().userEnabledCuDNN());
}

std::vector<StackedTensor> StackedBatchNorm2dImpl::tensors() const {
  return {StackedTensor{weight, {channels_}}, StackedTensor{bias, {channels_}}};
}

std::vector<StackedTensor> StackedBatchNorm2dImpl::buffer_tensors() const {
  return {StackedTensor{running_mean, {channels_}}, StackedTensor{running_var, {channels_}},
          StackedTensor{num_batches_tracked, {}}};
}

}  // namespace cellgan
