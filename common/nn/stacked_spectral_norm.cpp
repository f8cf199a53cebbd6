// Spectral normalisation per member by batched power iteration
// (stacked_spectral_norm.h).
#include "common/nn/stacked_spectral_norm.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "common/nn/precision.h"

namespace cellgan {
namespace {

constexpr double kNormEps = 1e-12;  // spectral_norm.cpp's

// Each row of v [P, n] over its own norm.
torch::Tensor normalised_rows(const torch::Tensor& v) {
  return v / v.norm(2, {1}, /*keepdim=*/true).clamp_min(kNormEps);
}

// [P, a, b] x [P, b] -> [P, a].
torch::Tensor batched_mv(const torch::Tensor& m, const torch::Tensor& v) { return torch::bmm(m, v.unsqueeze(2)).squeeze(2); }

}  // namespace

StackedSpectralNormImpl::StackedSpectralNormImpl(std::int64_t members, std::int64_t rows, InitialWeights weights)
    : members_(members), rows_(rows) {
  if (members < 1 || rows < 1)
    throw std::invalid_argument(fmt::format("StackedSpectralNorm: members and rows must be >= 1 (got {}, {})", members, rows));
  u = register_buffer("u", weights == InitialWeights::kDrawn ? normalised_rows(torch::randn({members, rows}))
                                                              : torch::empty({members, rows}));
}

torch::Tensor StackedSpectralNormImpl::matrices(const torch::Tensor& weight) const {
  if (weight.dim() < 2 || weight.size(0) != members_ || weight.size(1) != rows_)
    throw std::invalid_argument(fmt::format("StackedSpectralNorm: expected a [{}, {}, ...] weight, got [{}]", members_,
                                            rows_, fmt::join(weight.sizes(), ", ")));
  return weight.reshape({members_, rows_, -1});
}

torch::Tensor StackedSpectralNormImpl::sigma(const torch::Tensor& weight) const {
  // A copy of u: a later forward's in-place update must not touch a graph
  // that still needs this u for its backward pass.
  return batched_mv(matrices(weight).transpose(1, 2), u.clone()).norm(2, {1});
}

torch::Tensor StackedSpectralNormImpl::forward(const torch::Tensor& weight) {
  const NoAutocast fp32;  // u and sigma in fp32, as SpectralNorm's (a CPU's bmm would autocast, its mv not)
  const torch::Tensor w = matrices(weight);
  if (is_training()) {
    torch::NoGradGuard no_grad;
    const torch::Tensor plain = w.detach();
    u.copy_(normalised_rows(batched_mv(plain, normalised_rows(batched_mv(plain.transpose(1, 2), u)))));
  }
  return weight / per_member(sigma(weight), weight);
}

std::vector<StackedTensor> StackedSpectralNormImpl::buffer_tensors() const { return {StackedTensor{u, {rows_}}}; }

}  // namespace cellgan
