// One tensor of a stack of P networks (docs/architecture.md, "Stacked
// networks") and how its member rows map to the tensor of an individual
// network (networks.h): a stacked layer lists its tensors in the order its
// torch::nn counterpart lists its parameters() (and buffers()), each with
// the individual's sizes; a row holds the individual's values in the same
// order (row p viewed with those sizes).
//
// The same mapping serves a parameter and anything of its shape: its Adam
// moments (batched_adam.h), its gradient.
//
// Thread-safety: pure functions over the caller's tensors.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace cellgan {

struct StackedTensor {
  torch::Tensor stacked;                   // [P, ...]
  std::vector<std::int64_t> member_sizes;  // the individual's tensor's sizes
};

// Row p of `like` (`layout.stacked` or a tensor of its shape) in the
// individual's layout: a contiguous copy, detached, on `like`'s device.
torch::Tensor member_row(const StackedTensor& layout, const torch::Tensor& like, std::int64_t p);

// Writes `member` (the individual's layout, any device) into row p of
// `like`, without autograd, and into a GPU without waiting for it (so a
// host `member` must not change until the device has read it: pinned
// memory kept alive by its copy, or pageable memory, which the copy reads
// before it returns). std::invalid_argument when the sizes differ.
void set_member_row(const StackedTensor& layout, const torch::Tensor& like, std::int64_t p,
                    const torch::Tensor& member);
// set_member_row() of members[k] into row first + k, for every k: in one
// copy when they are all on `like`'s device (a kernel, not one per row).
void set_member_rows(const StackedTensor& layout, const torch::Tensor& like, std::int64_t first,
                     const std::vector<torch::Tensor>& members);

// Applies the elementwise `op` (an exp, log, pow, sigmoid or tanh: a
// function whose vectorised and scalar CPU kernels round apart in the last
// bit) to x [P, ...] so that each member's values depend on its own values
// only, not on P nor on its row. ATen's CPU loops run the vectorised kernel
// on whole chunks and the scalar one on the tail, so an element's bits
// depend on its position; here every member's elements are laid out from a
// multiple of kMemberAlignment, padded (with 0.5) to a multiple of it, so
// no member's element ever falls in a tail. Differentiable; the padding's
// gradient is dropped. Members already a multiple long run unpadded.
constexpr std::int64_t kMemberAlignment = 64;
torch::Tensor member_aligned(const torch::Tensor& x, const std::function<torch::Tensor(const torch::Tensor&)>& op);

// Each member's mean of x [P, ...]: [P], in x's type. A member's n values
// are zero-padded to a power of two and summed by halves, each half added
// to the other by one elementwise kernel, so a member's bits depend on its
// own values only, on any device (a CUDA reduction's blocking, and so its
// order of adds, depends on how many members it reduces). About log2(n) + 2
// kernels; NaN and infinities carry through. Differentiable.
torch::Tensor fixed_order_member_means(const torch::Tensor& x);

// `values` [P], one per member, viewed as [P, 1, ..., 1] to broadcast
// against `like` [P, ...] (a view: no copy).
torch::Tensor per_member(const torch::Tensor& values, const torch::Tensor& like);

}  // namespace cellgan
