// The master rank of a coevolution run (SPEC §2): validates the input,
// hands the configuration to the workers, watches their heartbeats,
// writes metrics as generations complete, gathers every cell's ensemble
// over GLOBAL, scores each on final_samples samples and keeps the best.
//
// Bad input (configuration, worker count, data, classifier, a finished
// output directory) throws InputError before anything is written; the
// workers are told first, so every rank exits and none hangs.
//
// Fault policy of this version: a worker that is silent for
// runtime.dead_after_ms, or that reports a failure, ends the whole run
// (events.log says which and why; MPI_Abort). Late workers are logged.
//
// Thread-safety: call once, from the main thread of rank 0.
#pragma once

#include <map>
#include <string>

#include "common/comm/mpi_session.h"

namespace cellgan {

struct RunResult {
  std::string output_dir;
  std::string best;                       // "cell 3", or "grid" (the grid-wide ensemble)
  std::size_t best_generators = 0;        // generators in the best ensemble
  std::map<std::string, double> scores;  // of the best ensemble
  double seconds = 0.0;
};

RunResult run_master(MpiSession& session, const std::string& config_path);

}  // namespace cellgan
