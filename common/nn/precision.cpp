// Mixed precision (see precision.h).
#include "common/nn/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <fmt/format.h>

#include "common/error.h"

namespace cellgan {
namespace {

// Autocast's switch and 16-bit type for a device type. LibTorch 2.4 took
// the device type as an argument and made the per-device calls deprecated
// wrappers that warn at every call (in a training step: every forward).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_enabled(at::DeviceType type) { return at::autocast::is_autocast_enabled(type); }
at::ScalarType autocast_dtype(at::DeviceType type) { return at::autocast::get_autocast_dtype(type); }
void set_autocast(at::DeviceType type, bool enabled, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(type, dtype);
  at::autocast::set_autocast_enabled(type, enabled);
}
#else
bool autocast_enabled(at::DeviceType type) {
  return type == at::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
at::ScalarType autocast_dtype(at::DeviceType type) {
  return type == at::kCUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast(at::DeviceType type, bool enabled, at::ScalarType dtype) {
  if (type == at::kCUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
}
#endif

}  // namespace

AutocastScope::AutocastScope(Precision precision, const torch::Device& device) {
  if (precision == Precision::kFp32) return;
  active_ = true;
  cuda_ = device.is_cuda();
  const at::DeviceType type = cuda_ ? at::kCUDA : at::kCPU;
  was_enabled_ = autocast_enabled(type);
  was_type_ = autocast_dtype(type);
  set_autocast(type, true, precision == Precision::kFp16 ? at::kHalf : at::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast(cuda_ ? at::kCUDA : at::kCPU, was_enabled_, was_type_);
}

std::optional<at::ScalarType> autocast_type(const torch::Device& device) {
  if (!device.is_cpu() && !device.is_cuda()) return std::nullopt;
  const at::DeviceType type = device.type();
  if (!autocast_enabled(type)) return std::nullopt;
  return autocast_dtype(type);
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
