// GAN losses per member of a stack (stacked_losses.h).
#include "common/nn/stacked_losses.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "common/nn/losses.h"

namespace cellgan {
namespace {

void check_stacked_output(const torch::Tensor& d, const char* what) {
  if (d.dim() != 3 || d.size(2) != 1)
    throw std::invalid_argument(
        fmt::format("{}: expected stacked outputs [P, B, 1], got [{}]", what, fmt::join(d.sizes(), ", ")));
}

MemberLosses with_total(torch::Tensor per_member) { return {per_member, per_member.sum()}; }

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

}  // namespace cellgan
