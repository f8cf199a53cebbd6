// The per_class layout, master half (master_layout.h; the worker half is
// worker/per_class_layout.h): the K class cells are split over the workers
// by partition_cells() on the K×1 grid; a generation has one record per
// class. At the end the class ensembles become one conditional generator
// (common/nn/class_generator.h), the classes weighted by their share of
// the training images:
// - it is scored as one generator (FID, TVD, IS on final_samples);
// - each class's generator is checked with the score classifier: the
//   fraction of final_samples/K of its samples labelled with its class
//   ("class_accuracy", per cell in result.json, and their mean);
// - ensemble.bin + classes.json (the conditional generator), samples.png,
//   classes.png (one row of samples per class), summary.txt and
//   result.json (last) are written; "best" is "grid", the whole generator.
//
// Thread-safety: belongs to the master's control thread.
#pragma once

#include "grid/partition.h"
#include "master/master_layout.h"

namespace cellgan {

class PerClassResults final : public MasterLayout {
 public:
  // Reads the training labels (class_proportions). Throws InputError
  // unless 1 <= workers <= grid.rows (the classes) and every class has 2
  // training images or more.
  PerClassResults(const Config& config, int workers);

  LayoutDescription description() const override { return LayoutDescription(LayoutKind::kPerClass); }
  std::vector<std::string> assignment() const override;
  std::vector<std::string> reassign(const std::vector<int>& members) const override;
  int records_per_generation() const override { return grid_.cell_count(); }
  std::vector<int> cell_owners() const override { return owners_of(partition_); }
  RunResult finish(std::vector<ResultMessage> results, const FinishContext& context) override;

 private:
  const Config& config_;
  GridShape grid_;
  Partition partition_;
  std::vector<double> proportions_;  // class_proportions(config_), read when the job starts
};

// Each class's share of the configuration's training images (classes
// 0..grid.rows-1, after train_limit), summing to 1. Throws InputError
// naming the dataset when a class has fewer than 2 images (the
// constructor of PerClassResults calls it, so that is one line at start).
std::vector<double> class_proportions(const Config& config);

}  // namespace cellgan
