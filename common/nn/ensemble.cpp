// Weighted generator ensembles: exact-proportion sampling and the file form.
#include "common/nn/ensemble.h"

#include <torch/torch.h>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <sstream>

#include "common/bytes.h"
#include "common/error.h"
#include "common/nn/conditional_networks.h"
#include "common/nn/device.h"
#include "common/image_files.h"
#include "common/path_checks.h"

namespace cellgan {
namespace {

constexpr std::uint32_t kMagic = 0x45434731;  // "ECG1"
// Version 2 added toy_layers.
constexpr std::uint32_t kVersion = 2;

}  // namespace

std::vector<std::int64_t> Ensemble::sample_counts(const std::vector<double>& weights, std::int64_t n) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::int64_t> counts(weights.size(), 0);
  std::vector<std::pair<double, std::size_t>> remainders;
  std::int64_t used = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double exact = total > 0 ? weights[i] / total * static_cast<double>(n) : 0.0;
    counts[i] = static_cast<std::int64_t>(std::floor(exact));
    used += counts[i];
    remainders.push_back({exact - std::floor(exact), i});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; used < n && !remainders.empty(); k = (k + 1) % remainders.size(), ++used)
    ++counts[remainders[k].second];
  return counts;
}

torch::Tensor sample_mixture(std::vector<Individual*>& generators, const std::vector<double>& weights,
                             std::int64_t n, torch::Generator& gen) {
  torch::NoGradGuard no_grad;
  const auto counts = Ensemble::sample_counts(weights, n);
  torch::Tensor out;  // [n, image columns], filled a chunk at a time
  std::int64_t at = 0;
  for (std::size_t i = 0; i < generators.size(); ++i) {
    if (counts[i] == 0) continue;
    Generator& g = generators[i]->generator();
    const bool was_training = g->is_training();
    g->eval();
    // Drawn where `gen` is, all at once, then passed through the generator a
    // chunk at a time.
    const torch::Tensor z = torch::randn({counts[i], g->shape().latent_dim}, gen,
                                         torch::TensorOptions().dtype(torch::kFloat32).device(gen.device()));
    const torch::Device device = generators[i]->device();
    for (std::int64_t start = 0; start < counts[i]; start += kSampleChunk) {
      const std::int64_t rows = std::min(kSampleChunk, counts[i] - start);
      const torch::Tensor part =
          image_part(g->forward(to_device_without_waiting(z.narrow(0, start, rows), device)), g->shape());
      if (!out.defined()) out = torch::empty({n, part.size(1)}, part.options());
      out.narrow(0, at + start, rows).copy_(part);
    }
    at += counts[i];
    if (was_training) g->train();
  }
  if (!out.defined()) throw std::invalid_argument("sample_mixture: expected n >= 1 samples from generators with weight");
  return out;
}

torch::Tensor Ensemble::sample(std::int64_t n, std::uint64_t seed) {
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<Individual*> ptrs;
  for (auto& g : generators) ptrs.push_back(&g);
  return sample_mixture(ptrs, weights, n, gen);
}

std::vector<std::uint8_t> Ensemble::encode() const {
  std::vector<const Individual*> ptrs;
  for (const auto& g : generators) ptrs.push_back(&g);
  ByteWriter w;
  w.reserve(encoded_ensemble_size(weights, ptrs));
  encode_ensemble_to(w, shape, cell, weights, ptrs);
  return w.take();
}

std::size_t encoded_ensemble_size(const std::vector<double>& weights, const std::vector<const Individual*>& generators) {
  constexpr std::size_t kFixed = 128;  // more than magic, version, shape, cell, counts and checksum
  std::size_t size = kFixed + weights.size() * sizeof(double);
  for (const Individual* g : generators) size += sizeof(std::uint64_t) + g->encoded_size_bound(/*with_optimizer_state=*/false);
  return size;
}

void encode_ensemble_to(ByteWriter& w, const NetworkShape& shape, int cell, const std::vector<double>& weights,
                        const std::vector<const Individual*>& generators) {
  const std::size_t start = w.size();
  w.put<std::uint32_t>(kMagic);
  w.put<std::uint32_t>(kVersion);
  w.put<std::int32_t>(static_cast<std::int32_t>(shape.kind));
  w.put<std::int64_t>(shape.latent_dim);
  w.put<std::int64_t>(shape.data_dim);
  w.put<std::int64_t>(shape.toy_hidden);
  w.put<std::int64_t>(shape.toy_layers);
  w.put<std::int32_t>(cell);
  w.put_vector(weights);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(generators.size()));
  for (const Individual* g : generators) {
    const std::size_t mark = w.begin_block();
    g->encode_to(w, /*with_optimizer_state=*/false);
    w.end_block(mark);
  }
  const std::uint64_t sum = fnv1a64(w.bytes().data() + start, w.size() - start);
  w.put<std::uint64_t>(sum);
}

Ensemble Ensemble::decode(const std::vector<std::uint8_t>& bytes, const std::string& what, torch::Device device) {
  if (bytes.size() < 16) throw InputError(what + ": truncated: not an ensemble file");
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  ByteReader r(bytes.data(), bytes.size() - 8, what);
  if (r.get<std::uint32_t>() != kMagic) throw InputError(what + ": not a cellgan ensemble (bad magic number)");
  if (fnv1a64(bytes.data(), bytes.size() - 8) != stored)
    throw InputError(what + ": checksum mismatch: the file is truncated or corrupt");
  const auto version = r.get<std::uint32_t>();
  if (version != kVersion) {
    throw InputError(fmt::format("{}: ensemble format version {}, this build reads version {}", what, version, kVersion));
  }
  Ensemble e;
  e.shape.kind = static_cast<NetworkKind>(r.get<std::int32_t>());
  e.shape.latent_dim = r.get<std::int64_t>();
  e.shape.data_dim = r.get<std::int64_t>();
  e.shape.toy_hidden = r.get<std::int64_t>();
  e.shape.toy_layers = r.get<std::int64_t>();
  e.cell = r.get<std::int32_t>();
  e.weights = r.get_vector<double>();
  const auto count = r.get<std::uint32_t>();
  if (count != e.weights.size()) throw InputError(what + ": generator and weight counts differ");
  for (std::uint32_t i = 0; i < count; ++i)
    e.generators.push_back(Individual::decode(r.get_bytes(), e.shape, AdamSettings{}, true, device));
  return e;
}

void Ensemble::save(const std::string& path) const {
  const auto bytes = encode();
  write_file_atomic(path, std::string(bytes.begin(), bytes.end()));
}

Ensemble Ensemble::load(const std::string& path, torch::Device device) {
  const std::string why = why_no_input_file(path);
  if (!why.empty()) throw InputError(fmt::format("{}: {}: expected an ensemble.bin", path, why));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the ensemble file");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode(bytes, path, device);
}

}  // namespace cellgan
