// GAN losses (docs/architecture.md, "One generation of one cell") on discriminator outputs in (0, 1): bce, mse and the
// E-GAN heuristic; wgan_gp on a critic's raw scores; plus the per-network
// Mustangs draw.
//
// Thread-safety: pure functions (draw_mustangs_loss advances only the
// caller's generator).
#include "common/nn/losses.h"

#include <torch/torch.h>

#include <stdexcept>

#include "common/nn/precision.h"
#include "common/nn/stacked_tensor.h"

namespace cellgan {
namespace {

constexpr double kLogEps = 1e-8;

// The mean of `t`: over everything, or over all but the member dimension.
torch::Tensor mean_of(const torch::Tensor& t, LossMean mean) {
  switch (mean) {
    case LossMean::kWhole:
      return t.mean();
    case LossMean::kPerMember:
      return t.flatten(1).mean(1);
    case LossMean::kPerMemberInFixedOrder:
      break;
  }
  return fixed_order_member_means(t);
}

// log t; per member, laid out so that a member's logs do not depend on its
// stack (member_aligned, stacked_tensor.h).
torch::Tensor log_of(const torch::Tensor& t, LossMean mean) {
  if (mean == LossMean::kWhole) return t.log();
  return member_aligned(t, [](const torch::Tensor& x) { return x.log(); });
}

// log(max(p, eps)): finite for a saturated discriminator.
torch::Tensor safe_log(const torch::Tensor& p, LossMean mean) { return log_of(torch::clamp_min(p, kLogEps), mean); }

// PyTorch's BCELoss (mean) against the constant target y: the value
// -mean(max(log p, -100)) (or of log(1 - p) for y = 0) and the gradient
// (p - y) / max(p(1 - p), 1e-12) / N, as its backward computes them. Built
// from a surrogate rather than torch::binary_cross_entropy, which throws on
// a NaN input where training must see a NaN loss (a diverged copy).
torch::Tensor pytorch_bce(const torch::Tensor& p, double y, LossMean mean) {
  const torch::Tensor q = p.detach();
  const torch::Tensor value = -mean_of(torch::clamp_min(log_of(y == 1.0 ? q : 1.0 - q, mean), -100.0), mean);
  const torch::Tensor slope = (q - y) / torch::clamp_min(q * (1.0 - q), 1e-12);
  const torch::Tensor surrogate = mean_of(slope * p, mean);
  return surrogate - surrogate.detach() + value;
}

// Binary cross-entropy against an all-ones / all-zeros target.
torch::Tensor bce_real(const torch::Tensor& d, BceForm form, LossMean mean) {
  if (form == BceForm::kPyTorch) return pytorch_bce(d, 1.0, mean);
  return -mean_of(safe_log(d, mean), mean);
}
torch::Tensor bce_fake(const torch::Tensor& d, BceForm form, LossMean mean) {
  if (form == BceForm::kPyTorch) return pytorch_bce(d, 0.0, mean);
  return -mean_of(safe_log(1.0 - d, mean), mean);
}

[[noreturn]] void unresolved_mustangs(const char* where) {
  throw std::invalid_argument(std::string(where) +
                              ": LossKind::kMustangs must be resolved with draw_mustangs_loss first");
}

}  // namespace

torch::Tensor generator_loss(LossKind kind, const torch::Tensor& d_fake, BceForm form) {
  return generator_loss(kind, d_fake, form, LossMean::kWhole);
}

torch::Tensor discriminator_loss(LossKind kind, const torch::Tensor& d_real, const torch::Tensor& d_fake, BceForm form) {
  return discriminator_loss(kind, d_real, d_fake, form, LossMean::kWhole);
}

torch::Tensor generator_loss(LossKind kind, const torch::Tensor& d_fake_in, BceForm form, LossMean mean) {
  const torch::Tensor d_fake = widened(d_fake_in);
  switch (kind) {
    case LossKind::kBce:
      return bce_real(d_fake, form, mean);
    case LossKind::kMse:
      return mean_of((d_fake - 1.0).square(), mean);
    case LossKind::kHeuristic:
      return -0.5 * mean_of(safe_log(d_fake, mean), mean);
    case LossKind::kWganGp:
      return -mean_of(d_fake, mean);
    case LossKind::kMustangs:
      break;
  }
  unresolved_mustangs("generator_loss");
}

torch::Tensor discriminator_loss(LossKind kind, const torch::Tensor& d_real_in, const torch::Tensor& d_fake_in,
                                 BceForm form, LossMean mean) {
  const torch::Tensor d_real = widened(d_real_in);
  const torch::Tensor d_fake = widened(d_fake_in);
  switch (kind) {
    case LossKind::kBce:
    case LossKind::kHeuristic:
      return bce_real(d_real, form, mean) + bce_fake(d_fake, form, mean);
    case LossKind::kMse:
      return mean_of((d_real - 1.0).square(), mean) + mean_of(d_fake.square(), mean);
    case LossKind::kWganGp:
      return mean_of(d_fake, mean) - mean_of(d_real, mean);
    case LossKind::kMustangs:
      break;
  }
  unresolved_mustangs("discriminator_loss");
}

LossKind draw_mustangs_loss(SplitMix64& rng) {
  constexpr LossKind kChoices[] = {LossKind::kBce, LossKind::kMse, LossKind::kHeuristic};
  return kChoices[rng.below(/*n=*/3)];
}

}  // namespace cellgan
