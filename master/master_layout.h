// The master half of a layout (see worker/worker_layout.h for what a
// layout is and the worker half): how the work is split over the workers,
// how many records each generation has, and the end of the run — turning
// the workers' results into the run's result, scored and written.
//
// The job skeleton (Master, master.h) calls assignment() and
// records_per_generation() at start-up and finish() once every worker's
// result is in. Everything else — validation, heartbeats, deadlines,
// errors, metrics.jsonl, previews — is the skeleton's; what the layout
// means for them (the unit's name, a preview's title, the topology in
// words) it asks description().
//
// Implementations: CoevolutionResults (coevolution_results.h),
// DataParallelResults (data_parallel_results.h), PerClassResults
// (per_class_results.h).
//
// Thread-safety: belongs to the master's control thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/comm/protocol.h"
#include "common/config.h"
#include "common/layout_description.h"
#include "grid/partition.h"

namespace cellgan {

struct Ensemble;
class RunDirectory;
class SampleScorer;

// What the run ended with, for the command line.
struct RunResult {
  std::string output_dir;
  std::string best;                      // "cell 3", or "grid" (the grid-wide ensemble)
  std::size_t best_generators = 0;       // generators in the best ensemble
  std::map<std::string, double> scores;  // of the best ensemble
  double seconds = 0.0;
};

// What the end of the run may use besides the results.
struct FinishContext {
  SampleScorer& scorer;
  RunDirectory& run;
  std::chrono::steady_clock::time_point started;  // when the master started
  std::string master_kernels;
  std::vector<std::string> worker_kernels;  // by worker, rank 1 first
  // Where the master scores ("cpu", "cuda:N"; the final ensembles are read
  // onto it) and where each worker trained, rank 1 first.
  std::string master_device = "cpu";
  std::vector<std::string> worker_devices;
  // A resumed run's earlier stretches: their wall seconds and how many
  // (0 for a run never resumed), for summary.txt's whole wall time.
  double earlier_seconds = 0.0;
  int earlier_stretches = 0;
};

class MasterLayout {
 public:
  virtual ~MasterLayout() = default;
  // The unit's name, a preview's title, the topology in words, the best
  // result's name (common/layout_description.h).
  virtual LayoutDescription description() const = 0;
  // Lines for events.log: which worker does what.
  virtual std::vector<std::string> assignment() const = 0;
  // Lines for events.log after a lost worker: the work split over the
  // surviving workers `members` (world ranks, ascending).
  virtual std::vector<std::string> reassign(const std::vector<int>& members) const = 0;
  // The records a complete generation has (one per cell).
  virtual int records_per_generation() const = 0;
  // The worker (1..W) that trains each cell of the grid, as the live
  // status shows it (data_parallel: worker 1, which reports the pair).
  virtual std::vector<int> cell_owners() const = 0;
  // `results[i]` is worker rank i + 1's. Scores, chooses and writes the
  // result files into the run directory.
  virtual RunResult finish(std::vector<ResultMessage> results, const FinishContext& context) = 0;
};

// For implementations of finish(): every cell ensemble in `results`
// (`results[i]` is worker rank i + 1's; their bytes are freed), decoded, in
// cell order, then without non-finite generators
// (drop_non_finite_generators, final_ensemble.h). events.log gets
// "gathered N <what>" and a line per removal, which is also logged.
// Throws InputError for bytes that are not an ensemble.
std::vector<Ensemble> gather_finite_ensembles(std::vector<ResultMessage>& results, const FinishContext& context,
                                              const std::string& what);

// Each cell's worker (1..W) under `partition`.
std::vector<int> owners_of(const Partition& partition);

// The master half of `config.layout`. Throws InputError when the job's
// `workers` do not fit the layout.
std::unique_ptr<MasterLayout> make_master_layout(const Config& config, int workers);

}  // namespace cellgan
