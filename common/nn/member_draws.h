// Random generators of a cell's own, and the draws of a stack's members
// straight into the rows of a tensor that keeps its storage (the latent
// vectors, dropout masks and WGAN-GP shares of a lockstep step,
// worker/lockstep_training.h; docs/architecture.md, "Stacked networks").
//
// generator_on(device, seed) is a generator of its own on `device`: on the
// CPU an mt19937 generator seeded with `seed`, as
// at::detail::createCPUGenerator(seed) (and as torch::manual_seed(seed)
// leaves Torch's global one); on a GPU a Philox generator, a clone of the
// device's default generator set to `seed` (offset 0), as
// torch::manual_seed(seed) leaves the device's default one. So draws made on
// a GPU happen there, kernel by kernel, without a copy from the host, and
// each member's numbers come from its own generator only.
//
// Each draw_*_rows() fills row p of `into` [P, ...] from generators[p], in
// row order (members that share a generator draw one after another), with
// what the same draw into a new tensor of the row's sizes gives: on the CPU
// the bits of torch::randn / torch::rand / Dropout's mask drawn from that
// generator. A row is drawn where its generator is and copied when `into`
// lives elsewhere. std::invalid_argument when `into` has not P rows.
//
// Thread-safety: the draws advance the generators given: the caller owns
// them (one thread at a time each).
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace cellgan {

at::Generator generator_on(torch::Device device, std::uint64_t seed);

// Standard normal values (torch::randn).
void draw_normal_rows(const torch::Tensor& into, const std::vector<at::Generator>& generators);
// Uniform values in [0, 1) (torch::rand).
void draw_uniform_rows(const torch::Tensor& into, const std::vector<at::Generator>& generators);
// Dropout masks of probability `rate`: Bernoulli(1 - rate) values divided
// by 1 - rate, as torch::nn::Dropout draws them.
void draw_dropout_rows(const torch::Tensor& into, double rate, const std::vector<at::Generator>& generators);

// One dropout mask of `sizes` (float32) on `generator`'s device, drawn as
// draw_dropout_rows() draws a row.
torch::Tensor dropout_mask(torch::IntArrayRef sizes, double rate, const at::Generator& generator);

}  // namespace cellgan
