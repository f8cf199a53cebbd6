// Adam over stacked tensors, per member (batched_adam.h).
#include "common/nn/batched_adam.h"

#include "common/nn/device.h"
#include "common/nn/stacked_tensor.h"

#include <torch/torch.h>

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

namespace cellgan {
AdamStepScalars adam_step_scalars(const torch::Tensor& next_steps, const torch::Tensor& learning_rates,
                                  const BatchedAdamOptions& options) {
  torch::NoGradGuard no_grad;
  // As LibTorch's Adam on the host, in double: 1 - beta^t and lr / (1 - beta1^t).
  const torch::Tensor t = next_steps.clamp_min(1).to(torch::kFloat64);
  // Aligned, so that a member's beta^t does not depend on the size of the stack.
  const auto power_of = [&t](double beta) {
    return member_aligned(t, [beta](const torch::Tensor& x) { return torch::pow(beta, x); });
  };
  const torch::Tensor bias_correction1 = 1.0 - power_of(options.beta1);
  const torch::Tensor bias_correction2 = 1.0 - power_of(options.beta2);
  return {(-(learning_rates / bias_correction1)).to(torch::kFloat32), bias_correction2.sqrt().to(torch::kFloat32)};
}

void adam_update(const torch::Tensor& param, const torch::Tensor& grad, const torch::Tensor& exp_avg,
                 const torch::Tensor& exp_avg_sq, const torch::Tensor& neg_step_size,
                 const torch::Tensor& sqrt_bias_correction2, const BatchedAdamOptions& options,
                 const torch::Tensor& keep) {
  torch::NoGradGuard no_grad;
  const double beta1 = options.beta1;
  const double beta2 = options.beta2;
  if (!keep.defined()) {
    exp_avg.mul_(beta1).add_(grad, 1 - beta1);
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
    const torch::Tensor denom = (exp_avg_sq.sqrt() / sqrt_bias_correction2).add_(options.eps);
    // Adam's p.addcdiv_(m, denom, -step_size) is p + (-step_size * m) / denom.
    param.addcdiv_(neg_step_size * exp_avg, denom);
    return;
  }
  const torch::Tensor new_m = exp_avg.mul(beta1).add_(grad, 1 - beta1);
  const torch::Tensor new_v = exp_avg_sq.mul(beta2).addcmul_(grad, grad, 1 - beta2);
  const torch::Tensor denom = (new_v.sqrt() / sqrt_bias_correction2).add_(options.eps);
  const torch::Tensor new_p = param.addcdiv(neg_step_size * new_m, denom);
  exp_avg.copy_(torch::where(keep, new_m, exp_avg));
  exp_avg_sq.copy_(torch::where(keep, new_v, exp_avg_sq));
  param.copy_(torch::where(keep, new_p, param));
}

BatchedAdam::BatchedAdam(std::vector<torch::Tensor> params, double learning_rate, BatchedAdamOptions options)
    : params_(std::move(params)), options_(options) {
  if (params_.empty()) throw std::invalid_argument("BatchedAdam: no parameters");
  members_ = params_.front().dim() > 0 ? params_.front().size(0) : 0;
  const torch::Device device = params_.front().device();
  for (const torch::Tensor& p : params_) {
    if (p.dim() < 1 || p.size(0) != members_ || p.device() != device || !p.is_leaf() || !p.requires_grad())
      throw std::invalid_argument(
          fmt::format("BatchedAdam: every parameter must be a [{}, ...] leaf on {} that requires grad", members_,
                      device.str()));
  }
  const auto one_dtype = [this](const torch::Tensor& p) {
    return p.scalar_type() == params_.front().scalar_type() && p.is_floating_point();
  };
  if (options_.one_buffer && members_ > 0 && std::all_of(params_.begin(), params_.end(), one_dtype)) {
    move_into_one_buffer();
  } else {
    for (const torch::Tensor& p : params_) {
      exp_avg_.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
      exp_avg_sq_.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
    }
  }
  const auto on_device = torch::TensorOptions().device(device);
  learning_rates_ = torch::full({members_}, learning_rate, on_device.dtype(torch::kFloat64));
  steps_ = torch::zeros({members_}, on_device.dtype(torch::kLong));
}

namespace {

// Where each segment of the one buffer starts: a multiple of this many
// elements (256 bytes in float32), so that every parameter is aligned as an
// allocation of its own would be; the gaps stay zero.
constexpr std::int64_t kSegmentAlignment = 64;

std::int64_t aligned(std::int64_t n) { return (n + kSegmentAlignment - 1) / kSegmentAlignment * kSegmentAlignment; }

}  // namespace

void BatchedAdam::move_into_one_buffer() {
  torch::NoGradGuard no_grad;
  std::int64_t at = 0;
  for (const torch::Tensor& p : params_) {
    offsets_.push_back(at);
    at = aligned(at + p.numel());
  }
  flat_params_ = torch::zeros({at}, params_.front().options().requires_grad(false));
  const std::vector<torch::Tensor> segments = segments_of(flat_params_);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    segments[i].copy_(params_[i].detach());
    params_[i].set_data(segments[i]);
  }
  flat_exp_avg_ = torch::zeros_like(flat_params_);
  flat_exp_avg_sq_ = torch::zeros_like(flat_params_);
  exp_avg_ = segments_of(flat_exp_avg_);
  exp_avg_sq_ = segments_of(flat_exp_avg_sq_);
  gap_zeros_ = torch::zeros({kSegmentAlignment}, flat_params_.options());
}

std::vector<torch::Tensor> BatchedAdam::segments_of(const torch::Tensor& flat) const {
  std::vector<torch::Tensor> out;
  for (std::size_t i = 0; i < params_.size(); ++i)
    out.push_back(flat.narrow(0, offsets_[i], params_[i].numel()).view(params_[i].sizes()));
  return out;
}

const torch::Tensor& BatchedAdam::member_of() {
  if (member_of_.defined()) return member_of_;
  torch::NoGradGuard no_grad;
  member_of_ = torch::zeros({flat_params_.numel()}, flat_params_.options().dtype(torch::kInt));
  const torch::Tensor member_index = torch::arange(members_, member_of_.options());
  for (const torch::Tensor& segment : segments_of(member_of_)) {
    const torch::Tensor rows = segment.view({members_, -1});
    rows.copy_(member_index.view({members_, 1}).expand(rows.sizes()));
  }
  return member_of_;
}

void BatchedAdam::check_member(std::int64_t p, const char* what) const {
  if (p < 0 || p >= members_)
    throw std::out_of_range(fmt::format("BatchedAdam::{}: member {} outside a stack of {}", what, p, members_));
}

void BatchedAdam::set_learning_rate(std::int64_t p, double lr) {
  check_member(p, "set_learning_rate");
  learning_rates_[p].fill_(lr);
}

void BatchedAdam::set_learning_rates(const std::vector<double>& lrs) {
  if (static_cast<std::int64_t>(lrs.size()) != members_)
    throw std::invalid_argument(
        fmt::format("BatchedAdam::set_learning_rates: {} rates for {} members", lrs.size(), members_));
  copy_without_waiting(torch::tensor(lrs, torch::kFloat64), learning_rates_);
}

void BatchedAdam::set_steps(const std::vector<std::int64_t>& steps) {
  if (static_cast<std::int64_t>(steps.size()) != members_)
    throw std::invalid_argument(
        fmt::format("BatchedAdam::set_steps: {} step counts for {} members", steps.size(), members_));
  if (std::any_of(steps.begin(), steps.end(), [](std::int64_t s) { return s < 0; }))
    throw std::invalid_argument("BatchedAdam::set_steps: a step count is >= 0");
  copy_without_waiting(torch::tensor(steps, torch::kLong), steps_);
}

void BatchedAdam::set_step(std::int64_t p, std::int64_t step) {
  check_member(p, "set_step");
  if (step < 0) throw std::invalid_argument("BatchedAdam::set_step: a step count is >= 0");
  steps_[p].fill_(step);
}

void BatchedAdam::drop_moments() {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    exp_avg_[i] = torch::Tensor();
    exp_avg_sq_[i] = torch::Tensor();
  }
  flat_exp_avg_ = torch::Tensor();
  flat_exp_avg_sq_ = torch::Tensor();
}

void BatchedAdam::set_moments(std::vector<torch::Tensor> exp_avg, std::vector<torch::Tensor> exp_avg_sq) {
  if (exp_avg.size() != params_.size() || exp_avg_sq.size() != params_.size())
    throw std::invalid_argument("BatchedAdam::set_moments: one pair of moments per parameter");
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (!exp_avg[i].defined() || !exp_avg_sq[i].defined() || exp_avg[i].sizes() != params_[i].sizes() ||
        exp_avg_sq[i].sizes() != params_[i].sizes())
      throw std::invalid_argument(fmt::format("BatchedAdam::set_moments: parameter {}'s moments have another shape", i));
  if (!in_one_buffer()) {
    exp_avg_ = std::move(exp_avg);
    exp_avg_sq_ = std::move(exp_avg_sq);
    return;
  }
  // Each moment copied into its segment and let go at once, so that no more
  // than one buffer and one parameter's moment are held beside the inputs.
  const auto into_one_buffer = [this](std::vector<torch::Tensor>& moments) {
    const torch::Tensor flat = torch::zeros_like(flat_params_);
    const std::vector<torch::Tensor> segments = segments_of(flat);
    for (std::size_t i = 0; i < moments.size(); ++i) {
      segments[i].copy_(moments[i]);
      moments[i] = torch::Tensor();
    }
    return flat;
  };
  flat_exp_avg_ = into_one_buffer(exp_avg);
  exp_avg_ = segments_of(flat_exp_avg_);
  flat_exp_avg_sq_ = into_one_buffer(exp_avg_sq);
  exp_avg_sq_ = segments_of(flat_exp_avg_sq_);
}

void BatchedAdam::zero_grad() {
  for (torch::Tensor& p : params_) {
    if (p.mutable_grad().defined()) {
      p.mutable_grad().detach_();
      p.mutable_grad().zero_();
    }
  }
}

void BatchedAdam::step() { update(torch::Tensor()); }

void BatchedAdam::step(const torch::Tensor& row_mask) {
  if (row_mask.dim() != 1 || row_mask.size(0) != members_ || row_mask.scalar_type() != torch::kBool ||
      row_mask.device() != steps_.device())
    throw std::invalid_argument(
        fmt::format("BatchedAdam::step: the row mask must be a bool [{}] on {}", members_, steps_.device().str()));
  update(row_mask);
}

// An undefined `row_mask` steps every member, in place; a defined one
// computes the update aside and keeps it for the marked rows only.
void BatchedAdam::update(const torch::Tensor& row_mask) {
  torch::NoGradGuard no_grad;
  const bool masked = row_mask.defined();
  const torch::Tensor next_steps = masked ? steps_ + row_mask.to(torch::kLong) : steps_ + 1;
  // A masked row's t may be 0; its values are computed and then dropped.
  const AdamStepScalars scalars = adam_step_scalars(next_steps, learning_rates_, options_);
  if (one_buffer_step_possible()) {
    update_one_buffer(row_mask, scalars);
    steps_.copy_(next_steps);
    return;
  }
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const torch::Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    adam_update(p, p.grad(), exp_avg_[i], exp_avg_sq_[i], per_member(scalars.neg_step_size, p),
                per_member(scalars.sqrt_bias_correction2, p), options_,
                masked ? per_member(row_mask, p) : torch::Tensor());
  }
  steps_.copy_(next_steps);
}

bool BatchedAdam::one_buffer_step_possible() const {
  if (!in_one_buffer() || !flat_exp_avg_.defined()) return false;
  const auto* base = static_cast<const char*>(flat_params_.data_ptr());
  const auto element = static_cast<std::int64_t>(flat_params_.element_size());
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const torch::Tensor& p = params_[i];
    if (!p.grad().defined() || p.grad().scalar_type() != p.scalar_type() || !p.is_contiguous() ||
        p.data_ptr() != base + offsets_[i] * element)
      return false;
  }
  return true;
}

// update() on the three buffers at once; each element as update() takes
// it, its member's scalars spread to it by member_of_.
void BatchedAdam::update_one_buffer(const torch::Tensor& row_mask, const AdamStepScalars& scalars) {
  // The gradients laid out as the buffer, gaps and all.
  std::vector<torch::Tensor> grads;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    grads.push_back(params_[i].grad().reshape({-1}));
    const std::int64_t end = offsets_[i] + params_[i].numel();
    const std::int64_t next = i + 1 < params_.size() ? offsets_[i + 1] : flat_params_.numel();
    if (next > end) grads.push_back(gap_zeros_.narrow(0, 0, next - end));
  }
  const torch::Tensor& member = member_of();
  adam_update(flat_params_, torch::cat(grads), flat_exp_avg_, flat_exp_avg_sq_,
              scalars.neg_step_size.index_select(0, member), scalars.sqrt_bias_correction2.index_select(0, member),
              options_, row_mask.defined() ? row_mask.index_select(0, member) : torch::Tensor());
  // Written through the buffer: autograd's check of saved tensors still
  // sees each parameter change.
  for (const torch::Tensor& param : params_) param.unsafeGetTensorImpl()->bump_version();
}

}  // namespace cellgan
