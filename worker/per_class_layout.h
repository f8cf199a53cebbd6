// The per_class layout, worker half (worker_layout.h; issue 20 §2): one
// cell per class on a K×1 grid (grid.rows = K, classes 0..K-1), split over
// the workers by partition_cells() like the coevolution grid. Cell c
// trains its own G/D population on the training images of class c only,
// with the same cell trainer (cell_trainer.h) as coevolution, and
// exchanges nothing: its neighbourhood is itself (CellBlock::Isolated).
// Its result is every cell's ensemble, which the master (per_class_results.h)
// puts together into a conditional generator.
//
// Because a cell's draws depend on (seed, cell, generation) only, a cell's
// result does not depend on the worker count, and a resumed run continues
// to the bit (checkpoints are the coevolution cells').
//
// Thread-safety: belongs to the worker's training thread.
#pragma once

#include <memory>
#include <vector>

#include "grid/partition.h"
#include "worker/worker_layout.h"

namespace cellgan {

class CellBlock;
class SampleScorer;
class TrainingData;

class PerClassLayout final : public WorkerLayout {
 public:
  // The master checks the worker count (per_class_results.h); here
  // 1 <= workers <= grid.rows is partition_cells()' contract.
  PerClassLayout(const Config& config, int workers, c10::Device device);
  ~PerClassLayout() override;

  int worker_rows() const override { return partition_.worker_rows; }
  int worker_cols() const override { return partition_.worker_cols; }
  // Every class has 2 training images or more: the master checked at start
  // (class_proportions, per_class_results.h).
  std::string start(int local_rank, const ResumeFrom& from) override;
  Waited<std::vector<GenerationRecord>> run_generation(std::int64_t generation, WorkerExchange& exchange) override;
  Bytes results() override;
  Waited<std::vector<CellBytes>> checkpoint(WorkerExchange& exchange) override;

 private:
  const Config& config_;
  const c10::Device device_;  // where it computes
  GridShape grid_;
  Partition partition_;
  std::vector<std::unique_ptr<TrainingData>> data_;  // per cell of this worker
  std::unique_ptr<SampleScorer> scorer_;
  std::unique_ptr<CellBlock> block_;
};

}  // namespace cellgan
