// The worker processes the master may end by PID: a worker declared lost
// (hung, or stopped with SIGSTOP) would otherwise keep MPI_Finalize and the
// launcher waiting for ever (docs/operations.md, "Faults"). Each worker
// tells its PID and host at start-up (IdentityMessage); only a process on
// the master's own host, and never the master itself (one-process jobs,
// where workers are threads), is ever signalled.
//
// Thread-safety: set() on one thread before the others are called;
// kill_remaining() may then run on another thread.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "common/comm/protocol.h"

namespace cellgan {

class WorkerProcesses {
 public:
  explicit WorkerProcesses(int workers) : ids_(static_cast<std::size_t>(std::max(workers, 0))) {}

  // Worker rank `worker` (1..W) said who it is.
  void set(int worker, const IdentityMessage& id) { ids_.at(static_cast<std::size_t>(worker - 1)) = id; }
  // SIGKILLs the worker's process when it may (not one that has ended);
  // returns the events.log line of what was done, or "" when nothing was.
  std::string kill(int worker) const;
  // SIGKILLs every worker process of this host still there (at the end of
  // a job); returns the worker ranks killed.
  std::vector<int> kill_remaining() const;
  // The workers whose process on this host has ended (no such process, or
  // one that has died and is not yet reaped), in rank order; a worker on
  // another host, or a thread of this process, is never listed.
  std::vector<int> ended() const;
  // The workers whose process runs (or ran) on this host, apart from this
  // process itself, in rank order.
  std::vector<int> on_this_host() const;
  // "pid P on HOST", as the worker said at start-up.
  std::string where(int worker) const;

 private:
  std::vector<IdentityMessage> ids_;  // by worker, rank 1 first
};

// Whether `id` names a process the master may signal: on this host, and
// not the master's own.
bool is_killable(const IdentityMessage& id);

}  // namespace cellgan
