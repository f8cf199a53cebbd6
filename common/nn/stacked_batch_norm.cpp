// Batch normalisation per member (stacked_batch_norm.h).
#include "common/nn/stacked_batch_norm.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "common/nn/stacked_conv.h"

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
  if (x.dim() != 5 || x.size(0) != members_ || x.size(2) != channels_)
    throw std::invalid_argument(fmt::format("StackedBatchNorm2d::forward: expected a [{}, B, {}, H, W] tensor, got [{}]",
                                            members_, channels_, fmt::join(x.sizes(), ", ")));
  if (!x.is_cuda()) {
    const std::vector<torch::Tensor> inputs = x.unbind(0);
    const std::vector<torch::Tensor> weights = weight.unbind(0);
    const std::vector<torch::Tensor> biases = bias.unbind(0);
    std::vector<torch::Tensor> outputs;
    for (std::int64_t p = 0; p < members_; ++p) outputs.push_back(member_forward(inputs[p], p, weights[p], biases[p]));
    return torch::stack(outputs);
  }
  if (is_training()) {
    if (x.size(1) * x.size(3) * x.size(4) == 1)
      throw std::invalid_argument("StackedBatchNorm2d::forward: more than one value per channel needed in training");
    torch::NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  // The running statistics' views share their storage, so batch_norm
  // updates the stacked buffers in place.
  return from_grouped(torch::batch_norm(to_grouped(x), weight.view({-1}), bias.view({-1}), running_mean.view({-1}),
                                        running_var.view({-1}), is_training(), kMomentum, kEps,
                                        at::globalContext().userEnabledCuDNN()),
                      members_);
}

torch::Tensor StackedBatchNorm2dImpl::member_forward(const torch::Tensor& x, std::int64_t p, const torch::Tensor& w,
                                                     const torch::Tensor& b) {
  if (is_training()) {
    if (x.size(0) * x.size(2) * x.size(3) == 1)
      throw std::invalid_argument("StackedBatchNorm2d::forward: more than one value per channel needed in training");
    torch::NoGradGuard no_grad;
    num_batches_tracked[p].add_(1);
  }
  return torch::batch_norm(x.contiguous(), w, b, running_mean[p], running_var[p], is_training(), kMomentum, kEps,
                           at::globalContext().userEnabledCuDNN());
}

std::vector<StackedTensor> StackedBatchNorm2dImpl::tensors() const {
  return {StackedTensor{weight, {channels_}}, StackedTensor{bias, {channels_}}};
}

std::vector<StackedTensor> StackedBatchNorm2dImpl::buffer_tensors() const {
  return {StackedTensor{running_mean, {channels_}}, StackedTensor{running_var, {channels_}},
          StackedTensor{num_batches_tracked, {}}};
}

}  // namespace cellgan
