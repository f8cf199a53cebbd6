// Who the job's workers are, as the master sees them (master.h): each
// worker's process (to end a lost one, worker_processes.h), which workers
// failed or are lost, the members of the current epoch, GLOBAL's ranks,
// and the epoch (the rehomings so far).
//
// Start-up admits the workers that got ready: they are the members of
// epoch 0, and GLOBAL is the master then them, in order. Rehoming (a lost
// worker, the job going on in place) starts the next epoch: the surviving
// members are the members, and their new communicator's tag is
// kLocalGroupTag + 1000 * epoch (common/comm/protocol.h).
// A lost or failed worker stays so; the master sends it nothing.
//
// Thread-safety: the master's control thread, except kill_remaining(),
// which may run on another thread once start-up has set the identities.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/comm/protocol.h"
#include "master/worker_processes.h"

namespace cellgan {

class WorkerMembership {
 public:
  // Workers 1..`workers` (world ranks), none admitted yet.
  explicit WorkerMembership(int workers);

  // Start-up: `ready` (world ranks, ascending) are the members of epoch 0.
  void admit(const std::vector<int>& ready);
  // The members of the current epoch (world ranks, ascending).
  const std::vector<int>& members() const { return members_; }
  // GLOBAL rank -> world rank: the master, then the members admitted at start-up.
  const std::vector<int>& global_ranks() const { return global_ranks_; }
  // The world rank of GLOBAL rank `global_rank` (std::out_of_range for none).
  int world_rank(int global_rank) const { return global_ranks_.at(static_cast<std::size_t>(global_rank)); }
  int epoch() const { return epoch_; }

  // The members that `alive` says are alive, in order.
  std::vector<int> survivors(const std::function<bool(int)>& alive) const;
  // Rehoming: the next epoch, with `survivors` as its members. Returns the
  // message that tells them: the members, the checkpoint they go on from
  // (`generation`, `folder`; 0 and "" for the start) and their group tag.
  MembersMessage rehome(std::vector<int> survivors, std::int64_t generation, const std::string& folder);

  // Worker `worker` (1..W) is declared lost; any_lost() is then true.
  void lose(int worker);
  bool lost(int worker) const { return lost_.at(index(worker)); }
  // Worker `worker` reported a failure.
  void fail(int worker) { failed_.at(index(worker)) = true; }
  bool failed(int worker) const { return failed_.at(index(worker)); }
  // Lost or failed: the master sends it nothing more.
  bool out(int worker) const { return lost(worker) || failed(worker); }
  // Whether a worker was declared lost: the process must then not wait for
  // it in MPI_Finalize.
  bool any_lost() const { return any_lost_; }

  // The worker's process, as its IdentityMessage says.
  void set_identity(int worker, const IdentityMessage& id) { processes_.set(worker, id); }
  // SIGKILLs the worker's process when it may; the events.log line of what
  // was done, or "" (worker_processes.h).
  std::string kill(int worker) const { return processes_.kill(worker); }
  // SIGKILLs every worker process of this host still there.
  void kill_remaining() const { processes_.kill_remaining(); }
  // The workers whose process on this host has ended (worker_processes.h).
  std::vector<int> processes_ended() const { return processes_.ended(); }
  std::vector<int> processes_on_this_host() const { return processes_.on_this_host(); }
  std::string where(int worker) const { return processes_.where(worker); }

 private:
  static std::size_t index(int worker) { return static_cast<std::size_t>(worker - 1); }

  WorkerProcesses processes_;
  std::vector<bool> lost_;     // by worker: declared lost
  std::vector<bool> failed_;   // by worker: reported a failure
  std::vector<int> members_;   // the workers of the current epoch (world ranks)
  std::vector<int> global_ranks_;
  int epoch_ = 0;
  bool any_lost_ = false;
};

}  // namespace cellgan
