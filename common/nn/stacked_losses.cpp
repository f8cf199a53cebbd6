// GAN losses per member of a stack (stacked_losses.h).
#include "common/nn/stacked_losses.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "common/nn/device.h"
#include "common/nn/losses.h"

namespace cellgan {
namespace {

void check_stacked_output(const torch::Tensor& d, const char* what) {
  if (d.dim() != 3 || d.size(2) != 1)
    throw std::invalid_argument(
        fmt::format("{}: expected stacked outputs [P, B, 1], got [{}]", what, fmt::join(d.sizes(), ", ")));
}

MemberLosses with_total(torch::Tensor per_member) { return {per_member, per_member.sum(), per_member}; }

}  // namespace

MemberLosses stacked_generator_loss(LossKind kind, const torch::Tensor& d_fake, BceForm form) {
  check_stacked_output(d_fake, "stacked_generator_loss");
  return with_total(generator_loss(kind, d_fake, form, LossMean::kPerMember));
}

MemberLosses stacked_discriminator_loss(LossKind kind, const torch::Tensor& d_real, const torch::Tensor& d_fake,
                                        BceForm form) {
  check_stacked_output(d_real, "stacked_discriminator_loss");
  check_stacked_output(d_fake, "stacked_discriminator_loss");
  if (d_real.size(0) != d_fake.size(0))
    throw std::invalid_argument(fmt::format("stacked_discriminator_loss: {} real members but {} fake ones",
                                            d_real.size(0), d_fake.size(0)));
  return with_total(discriminator_loss(kind, d_real, d_fake, form, LossMean::kPerMember));
}

KindRows kind_rows(const std::vector<LossKind>& kinds, torch::Device device) {
  KindRows out{kinds, {}, {}, device};
  for (const LossKind k : kinds)
    if (std::find(out.distinct.begin(), out.distinct.end(), k) == out.distinct.end()) out.distinct.push_back(k);
  if (out.distinct.size() == 1) return out;
  for (const LossKind kind : out.distinct) {
    std::vector<std::int64_t> rows;
    for (std::size_t p = 0; p < kinds.size(); ++p)
      if (kinds[p] == kind) rows.push_back(static_cast<std::int64_t>(p));
    out.rows.push_back(to_device_without_waiting(torch::tensor(rows, torch::kLong), device));
  }
  return out;
}

MemberLosses losses_by_kind(const std::vector<LossKind>& kinds, torch::Device device,
                            const std::function<torch::Tensor(LossKind, const torch::Tensor& rows)>& loss_of) {
  return losses_by_kind(kind_rows(kinds, device), loss_of);
}

MemberLosses losses_by_kind(const KindRows& rows,
                            const std::function<torch::Tensor(LossKind, const torch::Tensor& rows)>& loss_of) {
  if (rows.distinct.size() == 1) {
    const torch::Tensor per_member = loss_of(rows.distinct.front(), torch::Tensor());
    return {per_member.detach(), per_member.sum(), per_member};
  }
  torch::Tensor per_member =
      torch::zeros({static_cast<std::int64_t>(rows.kinds.size())}, torch::dtype(torch::kFloat32).device(rows.device));
  torch::Tensor total;
  torch::Tensor attached = torch::zeros_like(per_member);
  for (std::size_t k = 0; k < rows.distinct.size(); ++k) {
    const torch::Tensor& index = rows.rows[k];
    const torch::Tensor part = loss_of(rows.distinct[k], index);
    per_member.index_copy_(0, index, part.detach());
    attached = attached.index_copy(0, index, part);
    total = total.defined() ? total + part.sum() : part.sum();
  }
  return {per_member, total, attached};
}

torch::Tensor rows_of(const torch::Tensor& t, const torch::Tensor& rows) {
  return rows.defined() ? t.index_select(0, rows) : t;
}

}  // namespace cellgan
