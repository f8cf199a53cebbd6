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
// `like`, without autograd. std::invalid_argument when the sizes differ.
void set_member_row(const StackedTensor& layout, const torch::Tensor& like, std::int64_t p,
                    const torch::Tensor& member);

}  // namespace cellgan
