// Rows of stacked tensors in an individual's layout (stacked_tensor.h).
#include "common/nn/stacked_tensor.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace cellgan {
namespace {

void check_row(const torch::Tensor& like, std::int64_t p) {
  if (like.dim() < 1 || p < 0 || p >= like.size(0))
    throw std::out_of_range(fmt::format("stacked tensor: row {} outside a stack of {}", p,
                                        like.dim() < 1 ? 0 : like.size(0)));
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
  if (member.sizes() != torch::IntArrayRef(layout.member_sizes))
    throw std::invalid_argument(fmt::format("stacked tensor: a member tensor of [{}], expected [{}]",
                                            fmt::join(member.sizes(), ", "), fmt::join(layout.member_sizes, ", ")));
  torch::NoGradGuard no_grad;
  torch::Tensor row = like[p];
  row.copy_(member.reshape(row.sizes()));
}

}  // namespace cellgan
