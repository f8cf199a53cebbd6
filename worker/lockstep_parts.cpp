// The parts of a lockstep run (lockstep_parts.h).
#include "worker/lockstep_parts.h"

#include <torch/torch.h>

#include <algorithm>

#include "common/nn/device.h"
#include "common/nn/member_draws.h"
#include "worker/generation_steps.h"

namespace cellgan {
namespace {

void copy_rows(const std::vector<StackedTensor>& from, const std::vector<StackedTensor>& to,
               const torch::Tensor& index) {
  for (std::size_t i = 0; i < from.size(); ++i) to[i].stacked.copy_(from[i].stacked.index_select(0, index));
}

// `rows` on `device`, without waiting for it.
torch::Tensor index_on(const std::vector<std::int64_t>& rows, const torch::Device& device) {
  return to_device_without_waiting(torch::tensor(rows, torch::kLong), device);
}

}  // namespace

CellStreams::CellStreams(const std::vector<const GenerationWorkingSet*>& works, torch::Device device) {
  for (const GenerationWorkingSet* work : works) {
    latent.push_back(latent_generator(*work, device));
    noise.push_back(generator_on(device, work->global_seed));
  }
}

LatentDraws::LatentDraws(std::vector<at::Generator> generators, std::int64_t steps_a_draw)
    : generators_(std::move(generators)), steps_a_draw_(std::max<std::int64_t>(1, steps_a_draw)) {}

void LatentDraws::next(const torch::Tensor& z) {
  if (steps_a_draw_ == 1) {
    draw_normal_rows(z, generators_);
    return;
  }
  if (!drawn_.defined() || used_ == steps_a_draw_) {
    if (!drawn_.defined()) {
      std::vector<std::int64_t> sizes = z.sizes().vec();
      sizes.insert(sizes.begin() + 1, steps_a_draw_);
      drawn_ = torch::empty(sizes, z.options());
    }
    draw_normal_rows(drawn_, generators_);
    used_ = 0;
  }
  torch::NoGradGuard no_grad;
  z.copy_(drawn_.select(1, used_++));
}

bool Opponents::plan(const std::vector<std::int64_t>& rows) {
  own_ = members_ == stack_.size();
  for (std::size_t p = 0; own_ && p < rows.size(); ++p) own_ = rows[p] == static_cast<std::int64_t>(p);
  if (own_) return true;
  picked_ = index_on(rows, stack_.device());
  std::vector<std::int64_t> members, firsts;
  for (std::size_t p = 0; p < rows.size(); ++p) {
    if (std::find(firsts.begin(), firsts.end(), rows[p]) != firsts.end()) continue;
    members.push_back(static_cast<std::int64_t>(p));
    firsts.push_back(rows[p]);
  }
  first_members_ = index_on(members, stack_.device());
  first_rows_ = index_on(firsts, stack_.device());
  return false;
}

StackedMembers& Opponents::stack() {
  if (own_) return stack_;
  if (!copy_) make_copy();
  torch::NoGradGuard no_grad;
  copy_rows(stack_.network()->parameter_tensors(), copy_->network()->parameter_tensors(), picked_);
  copy_rows(stack_.network()->buffer_tensors(), copy_->network()->buffer_tensors(), picked_);
  return *copy_;
}

void Opponents::return_buffers() {
  if (own_ || !copy_) return;
  const std::vector<StackedTensor> from = copy_->network()->buffer_tensors();
  if (from.empty()) return;
  torch::NoGradGuard no_grad;
  const std::vector<StackedTensor> to = stack_.network()->buffer_tensors();
  for (std::size_t i = 0; i < to.size(); ++i)
    to[i].stacked.index_copy_(0, first_rows_, from[i].stacked.index_select(0, first_members_));
}

void Opponents::make_copy() {
  const AdamSettings& adam = stack_.adam_settings();
  // stack() copies every row in before each use: nothing to draw.
  constexpr InitialWeights kUndrawn = InitialWeights::kUndrawn;
  if (stack_.role() == Role::kGenerator)
    copy_ = std::make_unique<StackedGenerator>(stack_.shape(), members_, 0.0, adam, LossKind::kBce, stack_.device(),
                                               kUndrawn);
  else
    copy_ = std::make_unique<StackedDiscriminator>(stack_.shape(), members_, 0.0, adam, LossKind::kBce,
                                                   stack_.device(), kUndrawn);
  for (const StackedTensor& t : copy_->network()->parameter_tensors()) t.stacked.requires_grad_(false);
  copy_->network()->set_member_generators(streams_);
}

FrozenParameters::FrozenParameters(StackedMembers& stack) {
  for (const StackedTensor& t : stack.network()->parameter_tensors())
    if (t.stacked.requires_grad()) frozen_.push_back(t.stacked.requires_grad_(false));
}

FrozenParameters::~FrozenParameters() {
  for (torch::Tensor& t : frozen_) t.requires_grad_(true);
}

void StackWatch::note(const torch::Tensor& per_member, bool summing) {
  torch::NoGradGuard no_grad;
  const torch::Tensor bad = torch::isfinite(per_member).logical_not();
  if (!lost.defined()) lost = torch::zeros_like(bad);
  lost.logical_or_(bad);
  if (!summing) return;
  if (!sum.defined()) sum = torch::full_like(per_member, -0.0);
  sum.add_(per_member);
}

}  // namespace cellgan
