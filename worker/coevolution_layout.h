// The coevolution layout, worker half (worker_layout.h; docs/architecture.md, "Processes and threads"-3): the
// worker trains its block of cells of the grid. Each generation it sends
// the centres of its cells that other workers need (kTagHalo, in cell
// order), takes in the halos it needs, and runs one generation of every
// cell (CellBlock). Its result is every cell's ensemble.
//
// The cells are split over the workers by partition_cells(); the workers'
// Cartesian grid is the partition's. "idle" in each record is the wait for
// the halos, shared evenly over the worker's cells.
//
// grid.exchange: sync waits each generation for the neighbours' halos of
// the same generation (a halo out of step is a logic_error), so the result
// does not depend on timing. async takes every halo that has arrived and
// trains each cell with the newest centre of each neighbour; it waits only
// for a cell not yet heard from at all (the first generation after a start
// or a rehoming) or more than grid.async_lag generations behind. Its
// results depend on the workers' timing.
//
// Thread-safety: belongs to the worker's training thread.
#pragma once

#include <map>
#include <memory>

#include "common/comm/protocol.h"
#include "grid/partition.h"
#include "worker/worker_layout.h"

namespace cellgan {

class CellBlock;
class SampleScorer;
class TrainingData;

class CoevolutionLayout final : public WorkerLayout {
 public:
  // Throws InputError unless 1 <= workers <= the grid's cells.
  CoevolutionLayout(const Config& config, int workers, c10::Device device);
  ~CoevolutionLayout() override;

  int worker_rows() const override { return partition_.worker_rows; }
  int worker_cols() const override { return partition_.worker_cols; }
  std::string start(int local_rank, const ResumeFrom& from) override;
  Waited<std::vector<GenerationRecord>> run_generation(std::int64_t generation, WorkerExchange& exchange) override;
  Bytes results() override;
  Waited<std::vector<CellBytes>> checkpoint(WorkerExchange& exchange) override;

 private:
  const Config& config_;
  const c10::Device device_;  // where it computes
  GridShape grid_;
  Partition partition_;
  HaloPlan plan_;
  std::vector<int> sent_cells_;  // this worker's cells that other workers need
  std::unique_ptr<TrainingData> data_;
  std::unique_ptr<SampleScorer> scorer_;
  std::unique_ptr<CellBlock> block_;
  std::map<int, HaloMessage> halos_;  // the halos the generation trains with; async keeps the newest

  // Fill halos_ for `generation`; none once done, else the interruption.
  std::optional<Interruption> same_generation_halos(std::int64_t generation, WorkerExchange& exchange);
  std::optional<Interruption> newest_halos(std::int64_t generation, WorkerExchange& exchange);
};

}  // namespace cellgan
