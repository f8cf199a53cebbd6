// How many workers each layout takes: the one statement of it, used by the
// layouts' own checks on the master (master_layout.h), by `cellgan launch`
// to choose W, and by `cellgan sweep` to skip what a layout refuses.
//
// - coevolution: 1..rows*cols workers (each owns whole cells); one per cell
//   by default.
// - per_class: 1..classes (grid.rows) workers; one per class by default.
// - data_parallel: any number of replicas, at most training.batch_size
//   with data_parallel.scaling strong; no default of its own (the launcher
//   takes one per core).
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "common/config.h"

namespace cellgan {

struct WorkerRange {
  int max = 0;      // 0: no upper bound
  int natural = 0;  // one worker per unit of work; 0: the layout has none
};

WorkerRange worker_range(const Config& config);
// "" when `workers` fit `config`'s layout, else why not, in words that
// follow "N worker ranks" ("do not fit a 2x2 grid: expected 1..4").
std::string workers_misfit(const Config& config, int workers);

}  // namespace cellgan
