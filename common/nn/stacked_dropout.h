// Dropout for P members at once (docs/architecture.md, "Stacked networks")
// on [P, ...], each member with its own mask drawn from its own generator.
//
// Member p's mask is drawn as torch::nn::Dropout draws its own from Torch's
// global generator: a Bernoulli(1 - rate) draw from generators[p] over
// x[p]'s sizes, where that generator is (the CPU, or the GPU for a
// generator_on() a GPU, member_draws.h), divided by 1 - rate; the output is
// x times the masks (moved to x's device). So a member whose generator is in the state
// Torch's global generator would be in gets Dropout's mask, and a member's
// mask never depends on the other members. Members may share a generator
// (the members of one cell): they then draw one after another, in row
// order.
//
// Thread-safety: draws from the generators given: the caller owns them.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <vector>

namespace cellgan {

// Dropout of `x` [P, ...] with probability `rate`, where P =
// generators.size(); x itself outside training. std::invalid_argument when
// x has not P rows or rate is outside [0, 1).
torch::Tensor stacked_dropout(const torch::Tensor& x, double rate, bool training,
                              const std::vector<at::Generator>& generators);

// One member's dropout: x times its mask drawn from `generator`, in
// training; x itself outside.
torch::Tensor member_dropout(const torch::Tensor& x, double rate, bool training, const at::Generator& generator);

}  // namespace cellgan
