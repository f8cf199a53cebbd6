// A worker's block of cells (see cell_block.h).
#include "worker/cell_block.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "worker/cell_checkpoint.h"
#include "common/nn/torch_generator_lock.h"
#include "common/process_stats.h"
#include "grid/topology.h"
#include "worker/fault_injector.h"

namespace cellgan {

CellBlock::CellBlock(const Config& config, const GridShape& grid, std::vector<int> cells, const TrainingData& data,
                     SampleScorer& scorer, const ResumeFrom& from)
    : config_(config), grid_(grid), cells_(std::move(cells)) {
  trainers_.emplace_back(config, data, scorer);
  start(from);
}

CellBlock::CellBlock(const Config& config, const GridShape& grid, std::vector<int> cells, const Isolated& isolated,
                     SampleScorer& scorer, const ResumeFrom& from)
    : config_(config), grid_(grid), cells_(std::move(cells)), isolated_(true) {
  if (isolated.data.size() != cells_.size()) throw std::logic_error("CellBlock: one data set per isolated cell");
  for (const TrainingData* data : isolated.data) trainers_.emplace_back(config, *data, scorer, /*isolated=*/true);
  start(from);
}

std::vector<int> CellBlock::hood(int cell) const {
  if (isolated_) return {cell};
  return neighbourhood(grid_, cell, config_.grid.neighbourhood);
}

void CellBlock::start(const ResumeFrom& from) {
  cells_per_game_ = !trainers_.front().device().is_cuda() || cells_.empty()
                        ? 1
                        : cells_per_game_on_gpu(config_.network.kind, config_.training.population_size,
                                                hood(cells_.front()).size(), cells_.size());
  if (from.generation > 0) {
    for (int cell : cells_) {
      const std::string what = fmt::format("{}: cell {}", from.folder, cell);
      CellState state = decode_cell_state(
          read_cell_checkpoint(from.folder, manifest_entry(from.manifest, cell, from.folder)), config_, what,
          trainers_.front().device());
      if (state.cell != cell || state.generation != from.generation)
        throw InputError(fmt::format("{}: holds cell {} after generation {}, expected cell {} after generation {}",
                                     what, state.cell, state.generation, cell, from.generation));
      states_.push_back(std::move(state));
    }
    return;
  }
  const auto lock = lock_torch_generator();
  for (int cell : cells_) {
    states_.push_back(trainers_.front().initial_state(cell, static_cast<int>(hood(cell).size()) - 1));
  }
}

std::int64_t CellBlock::generation() const { return states_.empty() ? 0 : states_.front().generation; }

namespace {

std::pair<Bytes, Bytes> encode_centre(const CellState& s) {
  return {s.centre_generator().encode(), s.centre_discriminator().encode()};
}

}  // namespace

std::map<int, std::pair<Bytes, Bytes>> CellBlock::centres(const std::vector<int>& cells) const {
  std::map<int, std::pair<Bytes, Bytes>> out;
  for (int cell : cells) {
    const auto it = std::find(cells_.begin(), cells_.end(), cell);
    if (it == cells_.end()) throw std::logic_error("centres: cell " + std::to_string(cell) + " is not in this block");
    out[cell] = encode_centre(states_[static_cast<std::size_t>(it - cells_.begin())]);
  }
  return out;
}

std::vector<GenerationRecord> CellBlock::run_generation(const std::map<int, HaloMessage>& halos,
                                                       const FaultInjector* faults) {
  std::vector<CellGeneration> generations = begin_generations(halos, faults);
  release_free_memory();
  std::vector<CellGeneration*> all;
  std::vector<CellTrainer*> trainers;
  for (std::size_t i = 0; i < generations.size(); ++i) {
    all.push_back(&generations[i]);
    trainers.push_back(&trainer_of(i));
  }
  CellTrainer::train_together(trainers, all);
  release_free_memory();
  std::vector<GenerationRecord> records = CellTrainer::finish_together(trainers, all);
  release_free_memory();  // keeps the resident set from creeping up
  return records;
}

std::size_t cells_per_game_on_gpu(NetworkKind kind, std::int64_t population, std::size_t hood_size,
                                  std::size_t cells) {
  // A convolutional discriminator's activations take about 75 KB a fitness
  // sample: 64 of them on 1,000 samples, about 5 GB.
  constexpr std::size_t kConvolutionalRows = 64;
  const bool convolutional =
      kind == NetworkKind::kDcgan || kind == NetworkKind::kSngan || kind == NetworkKind::kDcganConditional;
  if (!convolutional) return std::max<std::size_t>(1, cells);
  // A game's discriminators: the cell's own and one centre a neighbour.
  const std::size_t rows = static_cast<std::size_t>(std::max<std::int64_t>(1, population)) + hood_size - 1;
  return std::clamp<std::size_t>(kConvolutionalRows / std::max<std::size_t>(1, rows), 1, std::max<std::size_t>(1, cells));
}

std::vector<CellGeneration> CellBlock::begin_generations(const std::map<int, HaloMessage>& halos,
                                                         const FaultInjector* faults) {
  // The cells begin in groups of `size`, in order: a group's cells are
  // prepared one by one, then play their fitness games at once, then select.
  const std::size_t size = std::max<std::size_t>(1, cells_per_game_);
  const auto group_of = [size](std::size_t i) { return i / size; };
  // Where each local cell begins in the order, and the last group that reads it.
  std::map<int, std::size_t> position, last_reader;
  std::vector<std::vector<int>> hoods;
  for (std::size_t i = 0; i < states_.size(); ++i) position[states_[i].cell] = i;
  for (std::size_t i = 0; i < states_.size(); ++i) {
    hoods.push_back(hood(states_[i].cell));
    for (std::size_t k = 1; k < hoods[i].size(); ++k)
      if (position.count(hoods[i][k])) last_reader[hoods[i][k]] = group_of(i);  // ascending i: the last one stays
  }
  // Cells of this group or an earlier one that are still read: snapshots
  // of their centres, on the cells' device.
  std::map<int, std::pair<Individual, Individual>> copies;
  std::vector<CellGeneration> generations;
  generations.reserve(states_.size());
  for (std::size_t first = 0; first < states_.size(); first += size) {
    const std::size_t group = group_of(first), end = std::min(states_.size(), first + size);
    // A cell read by its own group or a later one is read from a copy taken before the group begins.
    for (std::size_t i = first; i < end; ++i) {
      RECORD_USER_SCOPE("cellgan::snapshots");
      const auto reader = last_reader.find(states_[i].cell);
      if (reader != last_reader.end() && reader->second >= group)
        copies.emplace(states_[i].cell, std::pair{states_[i].centre_generator().snapshot(),
                                                  states_[i].centre_discriminator().snapshot()});
    }
    std::vector<CellGeneration*> begun;
    std::vector<CellTrainer*> trainers;
    for (std::size_t i = first; i < end; ++i) {
      CellState& state = states_[i];
      std::vector<NeighbourCentre> neighbours;
      for (std::size_t k = 1; k < hoods[i].size(); ++k) {
        const int other = hoods[i][k];
        const auto local = position.find(other);
        if (local == position.end()) {
          const HaloMessage& halo = halos.at(other);
          neighbours.push_back({&halo.generator, &halo.discriminator});
        } else if (group_of(local->second) > group) {
          const CellState& unbegun = states_[local->second];
          neighbours.push_back({nullptr, nullptr, &unbegun.centre_generator(), &unbegun.centre_discriminator()});
        } else {
          const auto& copy = copies.at(other);
          neighbours.push_back({nullptr, nullptr, &copy.first, &copy.second});
        }
        neighbours.back().cell = other;
      }
      const CellFaults cell_faults = faults ? faults->for_cell(state.cell, state.generation + 1) : CellFaults{};
      generations.push_back(trainer_of(i).prepare_generation(state, neighbours, cell_faults));
      trainers.push_back(&trainer_of(i));
    }
    for (std::size_t i = first; i < end; ++i) begun.push_back(&generations[i]);
    CellTrainer::play_together(trainers, begun);
    release_free_memory();  // the game's outputs, before the winners are copied
    for (std::size_t i = first; i < end; ++i) trainer_of(i).select(generations[i]);
    release_free_memory();
    for (auto it = copies.begin(); it != copies.end();)
      it = last_reader.at(it->first) <= group ? copies.erase(it) : std::next(it);
  }
  return generations;
}

Bytes CellBlock::encoded_results() const {
  std::vector<std::int32_t> cells;
  std::size_t size = 0;
  for (const auto& s : states_) {
    cells.push_back(s.cell);
    size += CellTrainer::encoded_ensemble_bound(s);
  }
  return encode_result(cells, size, [this](std::size_t i, ByteWriter& w) { CellTrainer::encode_ensemble(states_[i], w); });
}

std::vector<CellBytes> CellBlock::checkpoint() const {
  std::vector<CellBytes> cells;
  for (const CellState& s : states_) {
    std::vector<const Individual*> all;  // checked with one wait
    for (const std::vector<Individual>* p : {&s.generators, &s.discriminators, &s.neighbour_generators})
      for (const Individual& i : *p) all.push_back(&i);
    const std::vector<bool> finite = Individual::are_finite(all);
    if (!std::all_of(finite.begin(), finite.end(), [](bool f) { return f; }))
      throw std::runtime_error(
          fmt::format("checkpoint of cell {} after generation {}: a non-finite individual is never saved", s.cell,
                      s.generation));
    cells.push_back(CellBytes{s.cell, encode_cell_state(s)});
  }
  return cells;
}

}  // namespace cellgan
