// A weighted ensemble of generators (docs/architecture.md, "One generation of one cell" step 7 and "At the end"): the
// result of a cell, and of a run.
//
// Sampling draws exactly round(w_i * n) samples from generator i (largest
// remainders get the leftover samples, ties to the lower index), so the
// mixture is sampled in exact proportion to the weights, and the latent
// vectors come from a torch::Generator seeded by the caller.
//
// File form (save/load): magic, version, network shape, cell, weights and
// encoded generators, then a 64-bit FNV-1a checksum of everything before
// it. load() rejects a truncated, corrupt or foreign file with InputError
// naming it.
//
// Thread-safety: an Ensemble belongs to one thread at a time.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/nn/individual.h"

namespace cellgan {

struct Ensemble {
  NetworkShape shape;
  int cell = -1;  // the cell whose neighbourhood it is
  std::vector<Individual> generators;
  std::vector<double> weights;  // same length, non-negative, sum 1

  // How many of n samples each generator contributes.
  static std::vector<std::int64_t> sample_counts(const std::vector<double>& weights, std::int64_t n);

  // n samples [n, data_dim], concatenated in generator order.
  torch::Tensor sample(std::int64_t n, std::uint64_t seed);

  std::vector<std::uint8_t> encode() const;
  // The generators live on `device`.
  static Ensemble decode(const std::vector<std::uint8_t>& bytes, const std::string& what,
                         torch::Device device = torch::kCPU);

  void save(const std::string& path) const;
  static Ensemble load(const std::string& path, torch::Device device = torch::kCPU);
};

class ByteWriter;

// Ensemble::encode's bytes appended to `w`, for generators held elsewhere
// (a cell's state): the networks are not copied first. The size is a bound
// for reserving room.
void encode_ensemble_to(ByteWriter& w, const NetworkShape& shape, int cell, const std::vector<double>& weights,
                        const std::vector<const Individual*>& generators);
std::size_t encoded_ensemble_size(const std::vector<double>& weights, const std::vector<const Individual*>& generators);

// n samples of the mixture of `generators` under `weights`, latent vectors
// drawn from `gen`, on its device (a CPU generator gives the same draws
// whatever the generators' device; shared by the call sites that already
// own a generator). The
// generators see at most kSampleChunk rows at a time, so that 10,000
// samples cost little more memory than the samples themselves.
constexpr std::int64_t kSampleChunk = 1000;
torch::Tensor sample_mixture(std::vector<Individual*>& generators, const std::vector<double>& weights,
                             std::int64_t n, torch::Generator& gen);

}  // namespace cellgan
