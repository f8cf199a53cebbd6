// A linear layer for P members at once: baddbmm over stacked rows, with
// the backward products of torch::nn::Linear (stacked_linear.h).
#include "common/nn/stacked_linear.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "common/nn/precision.h"

namespace cellgan {
namespace {

// y = baddbmm(b, x, W^T), whose backward takes Linear's products:
// dx = g W, dW = g^T x, db = sum of g over the batch, in the operands'
// type. Under autocast the caller casts the operands to its type first, as
// Linear's would be, outside the function: the casts are then part of the
// graph, so a double backward (R1) reaches the fp32 weights through dx.
struct StackedLinearFunction : public torch::autograd::Function<StackedLinearFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    ctx->save_for_backward({x, weight});
    return torch::baddbmm(bias, x, weight.transpose(1, 2));
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor g = grad_outputs[0].to(x.scalar_type());  // a loss's gradient comes back in fp32
    torch::Tensor grad_x, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_x = torch::bmm(g, weight);
    if (ctx->needs_input_grad(1)) grad_weight = torch::bmm(g.transpose(1, 2), x);
    if (ctx->needs_input_grad(2)) grad_bias = g.sum(1, /*keepdim=*/true);
    return {grad_x, grad_weight, grad_bias};
  }
};

}  // namespace

StackedLinearImpl::StackedLinearImpl(std::int64_t members, std::int64_t in, std::int64_t out,
                                     InitialWeights weights)
    : members_(members), in_(in), out_(out) {
  if (members < 1 || in < 1 || out < 1)
    throw std::invalid_argument(
        fmt::format("StackedLinear: members, in and out must be >= 1 (got {}, {}, {})", members, in, out));
  weight = register_parameter("weight", torch::empty({members, out, in}));
  bias = register_parameter("bias", torch::empty({members, 1, out}));
  if (weights == InitialWeights::kUndrawn) return;
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  weight.uniform_(-bound, bound);
  bias.uniform_(-bound, bound);
}

torch::Tensor StackedLinearImpl::forward_with(const torch::Tensor& x, const torch::Tensor& w) {
  if (x.dim() != 3 || x.size(0) != members_ || x.size(2) != in_)
    throw std::invalid_argument(fmt::format("StackedLinear::forward: expected a [{}, B, {}] tensor, got [{}]",
                                            members_, in_, fmt::join(x.sizes(), ", ")));
  if (w.sizes() != weight.sizes())
    throw std::invalid_argument("StackedLinear::forward_with: the weight's sizes differ from the layer's");
  if (const auto low = autocast_type(x.device())) return StackedLinearFunction::apply(x.to(*low), w.to(*low), bias.to(*low));
  return StackedLinearFunction::apply(x, w, bias);
}

std::vector<StackedTensor> StackedLinearImpl::tensors() const {
  return {StackedTensor{weight, {out_, in_}}, StackedTensor{bias, {out_}}};
}

}  // namespace cellgan
