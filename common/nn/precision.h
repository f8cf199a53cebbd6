// Mixed precision for the training steps (configuration training.precision;
// seeds 000 and 002, "AMP"): forward passes under LibTorch's autocast, in
// bf16 or fp16, while weights, gradients, losses and Adam stay float32.
//
// AutocastScope turns autocast on for the device's type (CPU: bf16; CUDA:
// bf16 or fp16) for its lifetime and restores what was there: matrix
// products and convolutions then run in 16 bits, and their outputs are 16
// bit tensors. A caller casts the networks' outputs back to float32 before
// a loss. fp32 makes it a no-op. Autocast's switch is per thread; its
// 16-bit type is per process, and every rank of a job sets the same.
//
// fp16 needs a GPU (LibTorch's CPU autocast takes bf16 only), and a
// dynamic loss scale (loss_scaler.h; stacked_loss_scaler.h per member);
// check_precision() refuses it elsewhere with one line.
//
// Thread-safety: a scope belongs to the thread that made it.
#pragma once

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/types.h>

#include <optional>
#include <string>

#include "common/config.h"

namespace cellgan {

class AutocastScope {
 public:
  AutocastScope(Precision precision, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool cuda_ = false;
  bool was_enabled_ = false;
  at::ScalarType was_type_ = at::kFloat;
};

// For its lifetime, on this thread, every operator runs in its inputs'
// types whatever autocast says: for what must stay fp32 inside an
// autocast region (spectral norm's power iteration and sigma).
class NoAutocast {
 public:
  NoAutocast() : guard_(c10::autocast_dispatch_keyset) {}

 private:
  c10::impl::ExcludeDispatchKeyGuard guard_;
};

// The 16-bit type autocast runs products in on `device` (CPU or CUDA),
// if it is on there on this thread; std::nullopt otherwise.
std::optional<at::ScalarType> autocast_type(const torch::Device& device);

// A bf16 or fp16 tensor (an output under autocast) as float32; any other
// as it is (float64 stays float64).
torch::Tensor widened(const torch::Tensor& t);

// InputError "SOURCE: training.precision: ..." when config's precision
// cannot run on `device` (fp16 on a CPU). Every network takes fp16 on a
// GPU: the data-parallel replicas and the stacked members (every kind
// trains in lockstep) each keep a loss scale of their own.
void check_precision(const Config& config, const torch::Device& device);

}  // namespace cellgan
