// Runs the plan of a sweep, one run after another, each as
// `CELLGAN launch -w W CONFIG --resume auto --set ...` (which restarts a
// run that fails or stalls; launch/launcher.h), or with a LAUNCHER given,
// `LAUNCHER -np W+1 CELLGAN train CONFIG --resume auto --set ...`, in a
// process group of its own (launch/child_process.h), its output in
// OUT/logs/NAME.log and its run folder OUT/runs/NAME.
//
// - A run whose folder holds result.json is kept as it is; any other is
//   started with --resume auto, so an interrupted one goes on from its
//   newest checkpoint and a new one starts fresh.
// - A run the plan skips is reported with its reason.
// - A run that fails (any exit status but 0) is reported and the sweep
//   goes on; 75 (checkpointed and stopped) counts as unfinished.
// - Interrupts: the first asks the running job to checkpoint and stop
//   (SIGUSR1 to cellgan launch or mpirun, which pass it to the ranks); the
//   second ends it (SIGTERM). Either way no further run starts.
//
// Thread-safety: run_sweep runs on one thread; `interrupts` may be raised
// by a signal handler at any time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sweep/sweep_plan.h"

namespace cellgan::sweep {

struct SweepSetup {
  std::string config;                  // the base configuration file
  std::vector<std::string> settings;   // --set settings for every run, before the run's own
  std::string out;                     // the sweep's folder
  std::vector<std::string> launcher;   // empty: cellgan launch; else e.g. {"mpirun", "--oversubscribe", "--bind-to", "none"}
  std::string cellgan;                 // the cellgan executable
  std::int64_t generations = 0;        // training.generations of every run, for the status line
};

struct SweepOutcome {
  int finished = 0;  // now, including the ones kept
  int kept = 0;      // finished before this sweep started
  std::vector<std::string> skipped;     // "NAME: why"
  std::vector<std::string> failed;      // "NAME: exit N (see logs/NAME.log)"
  std::vector<std::string> unfinished;  // names of runs to resume (interrupted or not reached)
  bool interrupted = false;
};

// The run folder and log file of a planned run.
std::string run_folder(const SweepSetup& setup, const PlannedRun& run);
std::string log_file(const SweepSetup& setup, const PlannedRun& run);
// The command line of a run (for the log, and to start it).
std::vector<std::string> run_command(const SweepSetup& setup, const PlannedRun& run);

// `say` receives the progress lines, one when a run starts and one when
// it ends ("sweep [3/8] grid 2x2, W 2, seed 1: finished in 12s"). `status`,
// when given, receives about once a second while a run trains a line that
// replaces the one before ("sweep [3/8] grid 2x2, W 2, seed 1: generation
// 7/20, about 41s left for this run"), read from the run's run.json.
SweepOutcome run_sweep(const std::vector<PlannedRun>& plan, const SweepSetup& setup,
                       const std::atomic<int>& interrupts, const std::function<void(const std::string&)>& say,
                       const std::function<void(const std::string&)>& status = {});

}  // namespace cellgan::sweep
