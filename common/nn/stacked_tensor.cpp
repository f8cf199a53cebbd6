// Rows of stacked tensors in an individual's layout (stacked_tensor.h).
#include "common/nn/stacked_tensor.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace cellgan {
namespace {

void check_row(const torch::Tensor& like, std::int64_t p) {
  if (like.dim() < 1 || p < 0 || p >= like.size(0))
    throw std::out_of_range(fmt::format("stacked tensor: row {} outside a stack of {}", p,
                                        like.dim() < 1 ? 0 : like.size(0)));
}

void check_member_sizes(const StackedTensor& layout, const torch::Tensor& member) {
  if (member.sizes() != torch::IntArrayRef(layout.member_sizes))
    throw std::invalid_argument(fmt::format("stacked tensor: a member tensor of [{}], expected [{}]",
                                            fmt::join(member.sizes(), ", "), fmt::join(layout.member_sizes, ", ")));
}

}  // namespace

torch::Tensor member_row(const StackedTensor& layout, const torch::Tensor& like, std::int64_t p) {
  check_row(like, p);
  const torch::Tensor row = like.detach()[p];
  return row.reshape(layout.member_sizes).clone(torch::MemoryFormat::Contiguous);
}

void set_member_row(const StackedTensor& layout, const torch::Tensor& like, std::int64_t p,
                    const torch::Tensor& member) {
  check_row(like, p);
  check_member_sizes(layout, member);
  torch::NoGradGuard no_grad;
  torch::Tensor row = like[p];
  // Into a GPU without waiting for it (from pinned memory, no wait at all);
  // never into the host asynchronously.
  row.copy_(member.reshape(row.sizes()), /*non_blocking=*/row.is_cuda());
}

void set_member_rows(const StackedTensor& layout, const torch::Tensor& like, std::int64_t first,
                     const std::vector<torch::Tensor>& members) {
  if (members.empty()) return;
  check_row(like, first);
  check_row(like, first + static_cast<std::int64_t>(members.size()) - 1);
  const bool together = std::all_of(members.begin(), members.end(), [&](const torch::Tensor& m) {
    return m.device() == like.device() && m.scalar_type() == like.scalar_type();
  });
  if (!together) {
    for (std::size_t k = 0; k < members.size(); ++k)
      set_member_row(layout, like, first + static_cast<std::int64_t>(k), members[k]);
    return;
  }
  const torch::IntArrayRef row_sizes = like.sizes().slice(1);
  std::vector<torch::Tensor> rows;
  for (const torch::Tensor& m : members) {
    check_member_sizes(layout, m);
    rows.push_back(m.detach().reshape(row_sizes));
  }
  torch::NoGradGuard no_grad;
  torch::Tensor out = like.narrow(0, first, static_cast<std::int64_t>(members.size()));
  if (out.is_contiguous())
    at::stack_out(out, rows, 0);
  else
    out.copy_(torch::stack(rows));
}

torch::Tensor member_aligned(const torch::Tensor& x, const std::function<torch::Tensor(const torch::Tensor&)>& op) {
  if (x.dim() < 1 || x.size(0) < 1) return op(x);
  const std::int64_t members = x.size(0);
  const std::int64_t n = x.numel() / members;
  const std::int64_t padded = (n + kMemberAlignment - 1) / kMemberAlignment * kMemberAlignment;
  if (padded == n) return op(x);
  const torch::Tensor rows = torch::constant_pad_nd(x.reshape({members, n}), {0, padded - n}, 0.5);
  return op(rows).narrow(1, 0, n).reshape(x.sizes());
}

torch::Tensor fixed_order_member_means(const torch::Tensor& x) {
  if (x.dim() < 1) throw std::invalid_argument("fixed_order_member_means: x has no member dimension");
  const std::int64_t members = x.size(0);
  const std::int64_t n = members == 0 ? 0 : x.numel() / members;
  if (n == 0) return torch::full({members}, std::numeric_limits<double>::quiet_NaN(), x.options());  // as mean()
  std::int64_t width = 1;
  while (width < n) width *= 2;
  torch::Tensor rows = x.reshape({members, n});
  if (width > n) rows = torch::constant_pad_nd(rows, {0, width - n}, 0.0);
  for (; width > 1; width /= 2) rows = rows.narrow(1, 0, width / 2) + rows.narrow(1, width / 2, width / 2);
  return rows.squeeze(1) / static_cast<double>(n);
}

torch::Tensor per_member(const torch::Tensor& values, const torch::Tensor& like) {
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(like.dim()), 1);
  sizes[0] = values.size(0);
  return values.view(sizes);
}

}  // namespace cellgan
