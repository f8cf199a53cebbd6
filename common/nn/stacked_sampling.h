// Samples of many generators in one stacked pass (docs/architecture.md,
// "Stacked networks"): the mixture ES of a worker's cells on a GPU, where
// every generator of every cell's mixture draws rows of its own from a
// stream of its own, takes them here with a few kernels a pass instead of
// a forward pass per generator.
//
// sample_each_stacked(generators, counts, streams)[i] is what
// sample_mixture({generators[i]}, {1.0}, counts[i], streams[i]) of
// ensemble.h gives: the same latent vectors (drawn from streams[i], where
// it lies, into the first counts[i] rows of member i's input), through
// generator i in eval mode, image columns only (image_part()); to rounding,
// as stacked_networks.h's kernels round and with every member's rows padded
// with zeros to the longest count of its pass. Undefined where counts[i] is
// 0. A pass takes as many members as keep members × longest count to
// kStackedSampleRows; a member that draws more rows than that goes alone
// through sample_mixture(), which passes kSampleChunk rows at a time. The
// outputs are views of their pass's output. The generators must share one
// shape and device (std::invalid_argument otherwise); they are not changed.
//
// Thread-safety: the streams advance; the caller owns them and the
// generators. The stacks are made undrawn (initial_weights.h): nothing is
// drawn from Torch's global generator.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "common/nn/individual.h"

namespace cellgan {

constexpr std::int64_t kStackedSampleRows = 16384;

std::vector<torch::Tensor> sample_each_stacked(const std::vector<const Individual*>& generators,
                                               const std::vector<std::int64_t>& counts,
                                               const std::vector<at::Generator>& streams);

}  // namespace cellgan
