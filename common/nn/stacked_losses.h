// GAN losses per member of a stack (docs/architecture.md, "Stacked
// networks"): the losses of losses.h, each mean taken over one member's
// rows, on stacked discriminator outputs [P, B, 1].
//
// per_member[p] is the loss member p would have alone (losses.h on its
// [B, 1] rows); total is their sum, the one tensor to call backward() on:
// since a member's loss depends on its own rows only, each member's
// parameters receive the gradient of their own loss.
//
// stacked_generator_loss and stacked_discriminator_loss take one loss kind
// (resolved: not kMustangs) and one BCE form for all members.
// losses_by_kind takes each member's own kind (mustangs): the members of
// one kind are taken together, so no kind's loss (nor its slope, infinite
// where another kind's output saturates) touches a member of another.
//
// Thread-safety: pure functions.
#pragma once

#include <torch/types.h>

#include <functional>
#include <vector>

#include "common/config.h"

namespace cellgan {

struct MemberLosses {
  torch::Tensor per_member;  // [P], out of the graph
  torch::Tensor total;       // scalar: per_member.sum(), in the graph
  torch::Tensor attached;    // [P]: per_member in the graph (fp16's scale per member, stacked_loss_scaler.h)
};

// d_fake: [P, B, 1]; std::invalid_argument on other shapes.
MemberLosses stacked_generator_loss(LossKind kind, const torch::Tensor& d_fake, BceForm form = BceForm::kClamped);
// d_real, d_fake: [P, B, 1] with the same P.
MemberLosses stacked_discriminator_loss(LossKind kind, const torch::Tensor& d_real, const torch::Tensor& d_fake,
                                        BceForm form = BceForm::kClamped);

// Each member's loss with its own kind kinds[p]: `loss_of(kind, rows)`
// returns the losses [n] of the n members `rows` (an int64 index on
// `device`), all of kind `kind`; when every member has one kind it is
// called once with an undefined `rows`, meaning all members. per_member
// [P] is detached; total is the sum of the parts, to call backward() on.
MemberLosses losses_by_kind(const std::vector<LossKind>& kinds, torch::Device device,
                            const std::function<torch::Tensor(LossKind, const torch::Tensor& rows)>& loss_of);

// losses_by_kind's grouping, made ahead: each kind that occurs, in order of
// first occurrence, with its members' index on the device (none when all
// members have one kind). A step that takes it copies nothing from the host.
struct KindRows {
  std::vector<LossKind> kinds;     // as given, one per member
  std::vector<LossKind> distinct;  // in order of first occurrence
  std::vector<torch::Tensor> rows;  // per distinct kind; empty when one kind
  torch::Device device = torch::kCPU;
};
KindRows kind_rows(const std::vector<LossKind>& kinds, torch::Device device);
// losses_by_kind on a grouping made ahead.
MemberLosses losses_by_kind(const KindRows& rows,
                            const std::function<torch::Tensor(LossKind, const torch::Tensor& rows)>& loss_of);

// t's rows `rows` (index_select along dimension 0), or t itself when
// `rows` is undefined (losses_by_kind's "all members").
torch::Tensor rows_of(const torch::Tensor& t, const torch::Tensor& rows);

}  // namespace cellgan
