// The data-parallel layout, master half (master_layout.h; the worker half
// is worker/data_parallel_layout.h): every worker holds a replica of the
// one G/D pair, so a generation has one record (worker 0's, as cell 0) and
// a checkpoint one file. At the end worker 0's generator is scored on
// final_samples samples and written as the run's ensemble (ensemble.bin,
// samples.png, result.json, summary.txt, as for coevolution), so `cellgan
// sample` and `cellgan score` work on it; layout.json records the layout's
// options, the worker count and the global batch.
//
// After a lost worker the survivors go on from the last checkpoint and
// split each global batch among themselves (reassign()).
//
// Thread-safety: belongs to the master's control thread.
#pragma once

#include "master/master_layout.h"

namespace cellgan {

class DataParallelResults final : public MasterLayout {
 public:
  // Throws InputError unless the job's workers can split a global batch.
  DataParallelResults(const Config& config, int workers);

  LayoutDescription description() const override { return LayoutDescription(LayoutKind::kDataParallel); }
  std::vector<std::string> assignment() const override;
  std::vector<std::string> reassign(const std::vector<int>& members) const override;
  int records_per_generation() const override { return 1; }
  std::vector<int> cell_owners() const override {
    return std::vector<int>(static_cast<std::size_t>(config_.grid.rows * config_.grid.cols), 1);
  }
  RunResult finish(std::vector<ResultMessage> results, const FinishContext& context) override;

 private:
  const Config& config_;
  int workers_;
};


}  // namespace cellgan
