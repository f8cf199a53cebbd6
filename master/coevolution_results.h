// The coevolution layout, master half (master_layout.h): cells are split
// over the workers by partition_cells(); a generation has one record per
// cell; at the end every cell's ensemble, and the grid-wide one when
// evaluation.grid_ensemble is on, is scored and the best is written
// (final_ensemble.h).
//
// Thread-safety: belongs to the master's control thread.
#pragma once

#include "grid/partition.h"
#include "master/master_layout.h"

namespace cellgan {

class CoevolutionResults final : public MasterLayout {
 public:
  // Throws InputError unless 1 <= workers <= the grid's cells.
  CoevolutionResults(const Config& config, int workers);

  LayoutDescription description() const override { return LayoutDescription(LayoutKind::kCoevolution); }
  std::vector<std::string> assignment() const override;
  std::vector<std::string> reassign(const std::vector<int>& members) const override;
  int records_per_generation() const override { return grid_.cell_count(); }
  std::vector<int> cell_owners() const override { return owners_of(partition_); }
  RunResult finish(std::vector<ResultMessage> results, const FinishContext& context) override;

 private:
  const Config& config_;
  GridShape grid_;
  Partition partition_;
};

}  // namespace cellgan
