// Mixed precision (see precision.h).
#include "common/nn/precision.h"

#include <ATen/autocast_mode.h>

#include <fmt/format.h>

#include "common/error.h"

namespace cellgan {

AutocastScope::AutocastScope(Precision precision, const torch::Device& device) {
  if (precision == Precision::kFp32) return;
  active_ = true;
  cuda_ = device.is_cuda();
  const at::ScalarType type = precision == Precision::kFp16 ? at::kHalf : at::kBFloat16;
  if (cuda_) {
    was_enabled_ = at::autocast::is_enabled();
    was_type_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(type);
    at::autocast::set_enabled(true);
  } else {
    was_enabled_ = at::autocast::is_cpu_enabled();
    was_type_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(type);
    at::autocast::set_cpu_enabled(true);
  }
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (cuda_) {
    at::autocast::set_enabled(was_enabled_);
    at::autocast::set_autocast_gpu_dtype(was_type_);
  } else {
    at::autocast::set_cpu_enabled(was_enabled_);
    at::autocast::set_autocast_cpu_dtype(was_type_);
  }
}

void check_precision(const Config& config, const torch::Device& device) {
  if (config.training.precision != Precision::kFp16) return;
  if (!device.is_cuda())
    throw InputError(fmt::format("{}: training.precision: fp16 needs a GPU (the device is {}): expected fp32 or bf16 "
                                 "on a CPU",
                                 config.source, device.str()));
}

torch::Tensor widened(const torch::Tensor& t) {
  const bool half = t.scalar_type() == torch::kBFloat16 || t.scalar_type() == torch::kHalf;
  return half ? t.to(torch::kFloat) : t;
}

}  // namespace cellgan
