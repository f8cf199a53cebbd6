// Dropout with each member's own mask (stacked_dropout.h).
#include "common/nn/stacked_dropout.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "common/nn/member_draws.h"

namespace cellgan {

torch::Tensor stacked_dropout(const torch::Tensor& x, double rate, bool training,
                              const std::vector<at::Generator>& generators) {
  if (rate < 0.0 || rate >= 1.0) throw std::invalid_argument(fmt::format("stacked_dropout: rate {} outside [0, 1)", rate));
  if (!training) return x;
  const auto members = static_cast<std::int64_t>(generators.size());
  if (x.dim() < 2 || x.size(0) != members)
    throw std::invalid_argument(fmt::format("stacked_dropout: expected [{}, ...], got [{}]", members,
                                            fmt::join(x.sizes(), ", ")));
  const torch::Tensor masks = torch::empty(x.sizes(), x.options().dtype(torch::kFloat32));
  draw_dropout_rows(masks, rate, generators);
  return x * masks.to(x.scalar_type());
}

torch::Tensor member_dropout(const torch::Tensor& x, double rate, bool training, const at::Generator& generator) {
  if (rate < 0.0 || rate >= 1.0) throw std::invalid_argument(fmt::format("member_dropout: rate {} outside [0, 1)", rate));
  if (!training) return x;
  return x * dropout_mask(x.sizes(), rate, generator).to(x.device(), x.scalar_type());
}

}  // namespace cellgan
