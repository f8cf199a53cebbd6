// The per_class layout, worker half (see per_class_layout.h).
#include "worker/per_class_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/nn/scores.h"
#include "common/nn/torch_generator_lock.h"
#include "common/nn/training_data.h"
#include "worker/cell_block.h"

namespace cellgan {

PerClassLayout::PerClassLayout(const Config& config, int workers, c10::Device device)
    : config_(config), device_(device),
      grid_(static_cast<int>(config.grid.rows), 1),
      partition_(partition_cells(grid_, workers)) {}

PerClassLayout::~PerClassLayout() = default;

std::string PerClassLayout::start(int local_rank, const ResumeFrom& from) {
  const std::vector<int>& cells = partition_.cells_of[static_cast<std::size_t>(local_rank)];
  CellBlock::Isolated isolated;
  std::vector<std::string> sizes;
  for (int cell : cells) {
    data_.push_back(std::make_unique<TrainingData>(config_, cell, device_));
    isolated.data.push_back(data_.back().get());
    sizes.push_back(fmt::format("{}: {}", cell, data_.back()->size()));
  }
  // Networks are built here: under the generator lock (torch_generator_lock.h).
  const auto lock = lock_torch_generator();
  scorer_ = make_scorer(config_, device_);
  block_ = std::make_unique<CellBlock>(config_, grid_, cells, isolated, *scorer_, from);
  return fmt::format("classes {} (training images {})", fmt::join(cells, ","), fmt::join(sizes, ", "));
}

Waited<std::vector<GenerationRecord>> PerClassLayout::run_generation(std::int64_t /*generation*/,
                                                                     WorkerExchange& /*exchange*/) {
  std::vector<GenerationRecord> records = block_->run_generation({}, faults_);
  for (auto& r : records) r.seconds["idle"] = 0.0;  // nothing is exchanged
  return records;
}

Bytes PerClassLayout::results() { return block_->encoded_results(); }

Waited<std::vector<CellBytes>> PerClassLayout::checkpoint(WorkerExchange& /*exchange*/) {
  return block_->checkpoint();
}

}  // namespace cellgan
