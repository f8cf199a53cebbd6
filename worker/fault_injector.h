// Carries out the faults of a run's plan (common/fault_plan.h) that fall on
// one worker rank: the worker loop (worker.h) calls at_generation_start()
// before each generation, and the layout asks for_cell() for what each of
// its cells' generations is to suffer (cell_faults.h). Every fault done is
// logged here and returned as an events line, which travels to the master
// in the generation's records (GenerationRecord::events) and into
// events.log. A fault whose rank cannot report (kill, drop-heartbeats) is
// in events.log through the master's own "fault planned" lines and what
// it then notices.
//
//   kill             log, then raise(SIGKILL): never returns
//   stall            posix_spawn a `sh -c 'sleep N; kill -CONT PID'`, then
//                    raise(SIGSTOP): the whole process, every thread, stops
//                    for N s; returns once continued
//   drop-heartbeats  calls `go_silent` (WorkerComm::go_silent)
//   delay, nan       through for_cell()
//
// Thread-safety: at_generation_start() on the training thread; for_cell()
// is const and may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/checkpoint_store.h"
#include "common/fault_plan.h"
#include "worker/cell_faults.h"

namespace cellgan {

class FaultInjector {
 public:
  // The faults of `plan` placed on worker rank `rank` (world rank, 1..W)
  // or on any cell.
  FaultInjector(FaultPlan plan, int rank) : plan_(std::move(plan)), rank_(rank) {}

  // Before generation `gen` (1-based) begins: kill, stall or
  // drop-heartbeats as planned; the events lines of what was done (delays
  // that begin are named here too).
  std::vector<std::string> at_generation_start(std::int64_t gen, const std::function<void()>& go_silent) const;
  // Whether at_generation_start(gen) does anything on this rank. The worker
  // then first waits for its checkpoints to be written, for its reports
  // and records to reach the master and its messages the other workers
  // (checkpoint_writer.h, WorkerComm::flush_all), so a fault strikes at
  // the same point of the run whatever the disk's speed, the load and the
  // size of the messages.
  bool strikes_at(std::int64_t gen) const { return !plan_.at_generation_start(rank_, gen).empty(); }

  // After the checkpoint of generation `gen` is written in `folder`: the
  // planned corruptions, one flipped byte in the middle of each named
  // cell's file (left in place, as a failing disk would); the events lines
  // of what was done.
  std::vector<std::string> corrupt_checkpoint(std::int64_t gen, const std::string& folder,
                                              const std::vector<CheckpointFile>& files) const;
  // What `cell`'s generation `gen` (1-based) suffers.
  CellFaults for_cell(int cell, std::int64_t gen) const;

 private:
  FaultPlan plan_;
  int rank_;
};

// Stops the calling process (every thread) for `seconds`, then returns:
// a child process sends it SIGCONT. Throws std::runtime_error if the child
// cannot be started (the process is then not stopped).
void stop_process_for(std::int64_t seconds);

}  // namespace cellgan
