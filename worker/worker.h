// A worker rank of a cellgan job (docs/architecture.md, "Processes and threads"): receives the configuration
// from the master, joins GLOBAL and LOCAL, and runs its layout
// (worker_layout.h) on the training thread — the caller's — while a
// communication thread (WorkerComm) owns the communicators, beats, and
// watches the master. Runs the same over MPI and in one process with the
// master and the other workers (JobCommsFactory).
//
// Endings and exit codes (common/error.h):
// - finished: the result is sent, and the master has said it is written
//   (kTagDone); kExitOk.
// - the master refused to start (bad input, kExitBadInput, or another
//   error): the code in its start message, silently (the master prints the
//   one line).
// - its own failure: the error is logged and sent to the master
//   (kTagFailure); kExitFailure, or kExitInternal for a std::logic_error.
//   The master then ends the others with kExitFailure.
// - the master aborted the run: the code in its AbortMessage.
// - a planned fault (configuration `faults`, fault_injector.h) strikes at
//   the start of its generation: kill and stall act on this process,
//   drop-heartbeats silences the communication thread towards the master.
// - the master is presumed dead (silent for runtime.dead_after_ms, or no
//   start message within the default of it): kExitFailure, and
//   master_lost() is true — the process must not wait in MPI_Finalize.
//
// Thread-safety: construct and run() on one thread, once.
#pragma once

#include <cstdint>

#include "common/comm/job_comms.h"

namespace cellgan {

class Worker {
 public:
  // Test hooks (LevelDB style) for errors; the faults a user can inject
  // are the configuration's `faults` (fault_injector.h).
  struct TestHooks {
    std::int64_t throw_at = -1;   // the training step of this generation (0-based) throws
    bool throw_at_start = false;  // start-up throws, before the communicators
    bool vanish_at_start = false; // ends right after the start message, saying nothing more (as if killed)
    std::int64_t unreported_checkpoint = -1;  // this generation's checkpoint is saved, its report never sent
  };

  explicit Worker(JobCommsFactory& factory);
  void TEST_set_hooks(const TestHooks& hooks) { hooks_ = hooks; }

  // Runs the worker's part of the job; returns the exit code.
  int run();
  bool master_lost() const { return master_lost_; }

 private:
  JobCommsFactory& factory_;
  TestHooks hooks_;
  bool master_lost_ = false;
};

}  // namespace cellgan
