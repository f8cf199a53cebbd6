// A cell's state as bytes (see cell_checkpoint.h).
#include "worker/cell_checkpoint.h"

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "common/nn/networks.h"

namespace cellgan {
namespace {

constexpr std::uint32_t kMagic = 0x43454c4c;  // "CELL"
constexpr std::uint32_t kVersion = 1;

void put_population(ByteWriter& w, const std::vector<Individual>& population, bool with_optimizer_state) {
  w.put<std::uint64_t>(population.size());
  for (const auto& ind : population) w.put_bytes(ind.encode(with_optimizer_state));
}

std::vector<Individual> get_population(ByteReader& r, const NetworkShape& shape, AdamSettings adam,
                                       torch::Device device) {
  const auto n = r.get<std::uint64_t>();
  std::vector<Individual> out;
  for (std::uint64_t i = 0; i < n; ++i) out.push_back(Individual::decode(r.get_bytes(), shape, adam, true, device));
  return out;
}

}  // namespace

Bytes encode_cell_state(const CellState& state) {
  ByteWriter w;
  w.put<std::uint32_t>(kMagic);
  w.put<std::uint32_t>(kVersion);
  w.put<std::int32_t>(state.cell);
  w.put<std::int64_t>(state.generation);
  put_population(w, state.generators, true);
  put_population(w, state.discriminators, true);
  put_population(w, state.neighbour_generators, false);
  w.put_vector(state.mixture_weights);
  w.put<double>(state.mixture_objective);
  return w.take();
}

CellState decode_cell_state(const Bytes& bytes, const Config& config, const std::string& what,
                            torch::Device device) {
  ByteReader r(bytes, what);
  if (r.get<std::uint32_t>() != kMagic) throw InputError(what + ": bad magic number: not a cell state");
  if (const auto v = r.get<std::uint32_t>(); v != kVersion)
    throw InputError(fmt::format("{}: cell state version {}: expected {}", what, v, kVersion));
  const NetworkShape shape = network_shape(config);
  const AdamSettings adam{config.training.adam_beta1, config.training.adam_beta2};
  CellState s;
  try {
    s.cell = r.get<std::int32_t>();
    s.generation = r.get<std::int64_t>();
    s.generators = get_population(r, shape, adam, device);
    s.discriminators = get_population(r, shape, adam, device);
    s.neighbour_generators = get_population(r, shape, adam, device);
    s.mixture_weights = r.get_vector<double>();
    s.mixture_objective = r.get<double>();
    if (r.remaining() != 0) throw InputError("trailing bytes after the cell state");
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", what, e.what()));
  }
  return s;
}

}  // namespace cellgan
