// `cellgan launch`: runs a job (job_command.h) and supervises it until the
// run has finished, restarting it from its newest checkpoint when it
// fails, stops or stalls (attempt_verdict.h), at most `max_restarts` times.
//
// Each attempt:
// - starts in a session of its own (child_process.h), with
//   CELLGAN_EXIT_FILE (where the master writes its exit code),
//   CELLGAN_LAUNCH_NOTES (the restart lines events.log has not got yet;
//   the master writes them there) and CELLGAN_LAUNCHER_PID (the master
//   stops the run with a checkpoint if the launcher dies) in its
//   environment;
// - is watched every 200 ms: its progress against the deadline
//   (progress_watch.h), and the user's interrupts;
// - ends with every process of its session ended (process_session.h), so
//   no rank outlives it, a stopped one included.
// After the last attempt, the ending goes into the run folder's events.log
// (and a run.json left "running") only when the job wrote the folder: a
// job its master refused leaves the folder as it was.
// Interrupts: the first asks the run to checkpoint and stop (SIGUSR1 to
// mpirun or srun, which pass it to every rank); the second ends the job at
// once. Neither is followed by a restart.
//
// Thread-safety: run_launch runs on one thread; `interrupts` may be raised
// by a signal handler at any time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "launch/job_command.h"

namespace cellgan::launch {

struct LaunchSetup {
  JobOptions job;
  Starter starter = Starter::kMpirun;
  int workers = 1;
  int max_restarts = 3;
  std::chrono::milliseconds stall_floor{120000};  // progress_watch.h
  std::string run_dir;                            // the run's output_dir
};

// Returns the launcher's exit code (attempt_verdict.h). `say` gets the
// launcher's own lines (the attempt's command, each restart and why, the
// ending).
int run_launch(const LaunchSetup& setup, const std::atomic<int>& interrupts,
               const std::function<void(const std::string&)>& say);

}  // namespace cellgan::launch
