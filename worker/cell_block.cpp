// A worker's block of cells (see cell_block.h).
#include "worker/cell_block.h"

#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "common/process_stats.h"
#include "grid/topology.h"

namespace cellgan {

CellBlock::CellBlock(const Config& config, const GridShape& grid, std::vector<int> cells, const TrainingData& data,
                     SampleScorer& scorer)
    : config_(config), grid_(grid), cells_(std::move(cells)), trainer_(config, data, scorer) {
  for (int cell : cells_) {
    const auto hood = neighbourhood(grid_, cell, config_.grid.neighbourhood);
    states_.push_back(trainer_.initial_state(cell, static_cast<int>(hood.size()) - 1));
  }
}

std::int64_t CellBlock::generation() const { return states_.empty() ? 0 : states_.front().generation; }

std::map<int, std::pair<Bytes, Bytes>> CellBlock::centres() const {
  std::map<int, std::pair<Bytes, Bytes>> out;
  for (const auto& s : states_) out[s.cell] = {s.centre_generator().encode(), s.centre_discriminator().encode()};
  return out;
}

std::vector<GenerationRecord> CellBlock::run_generation(const std::map<int, std::pair<Bytes, Bytes>>& own,
                                                        const std::map<int, HaloMessage>& halos) {
  std::vector<GenerationRecord> records;
  for (auto& state : states_) {
    const auto hood = neighbourhood(grid_, state.cell, config_.grid.neighbourhood);
    std::vector<NeighbourCentre> neighbours;
    for (std::size_t k = 1; k < hood.size(); ++k) {
      const int other = hood[k];
      auto mine = own.find(other);
      if (mine != own.end()) {
        neighbours.push_back({&mine->second.first, &mine->second.second});
      } else {
        const HaloMessage& halo = halos.at(other);
        neighbours.push_back({&halo.generator, &halo.discriminator});
      }
    }
    records.push_back(trainer_.run_generation(state, neighbours));
    release_free_memory();  // keeps the resident set from creeping up
  }
  return records;
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

std::string to_json_line(const GenerationRecord& r) {
  nlohmann::json j;
  j["cell"] = r.cell;
  j["generation"] = r.generation;
  j["generator_loss"] = r.generator_loss;
  j["discriminator_loss"] = r.discriminator_loss;
  j["scores"] = r.scores;
  j["generator_lrs"] = r.generator_lrs;
  j["discriminator_lrs"] = r.discriminator_lrs;
  j["mixture_weights"] = r.mixture_weights;
  j["generators_replaced"] = r.generators_replaced;
  j["discriminators_replaced"] = r.discriminators_replaced;
  j["mixture_improved"] = r.mixture_improved;
  j["seconds"] = r.seconds;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cellgan
