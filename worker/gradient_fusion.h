// Tensor fusion (configuration key data_parallel.fusion_bytes): the
// tensors of one all-reduce are packed, in order, into flat float32
// buffers of at most `fusion_bytes` bytes, and each buffer is summed by one
// GradientAllreduce::sum() call — one message (per ring step) instead of
// one per tensor. A tensor larger than the limit goes alone; 0 puts every
// tensor in a buffer of its own. The sums depend on the packing only
// through rounding: the ring's chunk boundaries move with it, and with
// them the order in which the workers' values are added; reduce_broadcast
// gives the same bits whatever the packing.
//
// Thread-safety: the training thread's, like the all-reduce.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "worker/gradient_allreduce.h"

namespace cellgan {

// The buffers for tensors of `numels` elements: each a run of consecutive
// tensor indices.
std::vector<std::vector<std::size_t>> fusion_groups(const std::vector<std::int64_t>& numels,
                                                    std::int64_t fusion_bytes);

// Replaces each of `tensors` (float32, contiguous, all on one device: the
// CPU, or a GPU, summed there when the all-reduce sums on the device
// (nccl), else staged through pinned host memory) by its sum
// over every worker: none then, else the interruption of a sum
// (GradientAllreduce::sum), with the tensors unspecified.
[[nodiscard]] std::optional<Interruption> allreduce_fused(const std::vector<torch::Tensor>& tensors,
                                                         std::int64_t fusion_bytes, GradientAllreduce& reduce);

}  // namespace cellgan
