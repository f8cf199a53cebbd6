// Groups of tensors each reduced to one value with a few kernels in all,
// not a few a group: on a GPU every kernel is a launch, and a worker checks
// hundreds of individuals at a time (Individual::are_finite()).
//
// reduce_groups_by_size(groups, reduce_rows) gives, for each group (its
// tensors, all on one device and of one dtype, flattened and put one after
// another), reduce_rows of that group as a row: the groups of equal total
// size are put together with one cat into [n, size] (n at most
// kMostGroupedValues / size, at least 1: more make several), reduced row
// by row with one reduce_rows ([n, size] -> [n]), and every value comes to
// the host in one copy. Returns [groups.size()] on the CPU, in the groups'
// order. A group's value is what reduce_rows gives its row; how the device
// rounds a row may depend on the other rows beside it (a sum's order), so
// it is for values read for what they say (finite or not), not for their
// last bits. std::invalid_argument for an empty group or no group.
//
// Thread-safety: pure function.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace cellgan {

// The most values one cat holds (256 MB of fp32): a worker's 64 DCGAN
// copies with their Adam state would be gigabytes at once.
constexpr std::int64_t kMostGroupedValues = std::int64_t{64} << 20;

torch::Tensor reduce_groups_by_size(const std::vector<std::vector<torch::Tensor>>& groups,
                                    const std::function<torch::Tensor(const torch::Tensor&)>& reduce_rows);

}  // namespace cellgan
