// The worker's communication thread: it alone owns the worker's MPI
// communicators (WORLD, GLOBAL, LOCAL) once training starts. The training
// thread reaches it only through the methods below, which queue work and
// wait on a condition variable (STYLE.md, principle 3).
//
// Each run_once() step: send what the training thread queued; receive any
// halo (LOCAL) into the halo store; send a heartbeat when it is due; run a
// requested final gather; wake waiting callers. run() loops run_once()
// and sleeps when there was nothing to do, backing off from 0.2 ms to 5 ms,
// so the thread never spins on the cores the training thread needs.
//
// Thread-safety: publish_centres, wait_for_halos, report, set_progress,
// gather_results and finish may be called from the training thread while
// run() runs on the communication thread. run_once() belongs to one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "common/comm/communicator.h"
#include "common/comm/protocol.h"
#include "grid/partition.h"

namespace cellgan {

class WorkerComm {
 public:
  // `world`, `global` and `local` are this worker's communicators; `plan`
  // says which halos it sends and receives (workers = LOCAL ranks).
  WorkerComm(std::unique_ptr<Communicator> world, std::unique_ptr<Communicator> global,
             std::unique_ptr<Communicator> local, HaloPlan plan, std::chrono::milliseconds heartbeat_interval);

  // --- Training thread ---
  // Queues this worker's centre individuals of generation g for the
  // workers that need them. `centres` maps cell -> (G bytes, D bytes); it
  // is taken by value so that the bytes move into the messages.
  void publish_centres(std::int64_t generation, std::map<int, std::pair<Bytes, Bytes>> centres);
  // Blocks until every halo of generation g this worker needs has arrived;
  // returns them by cell and removes them from the store.
  std::map<int, HaloMessage> wait_for_halos(std::int64_t generation);
  // Queues a records message to the master.
  void report(RecordsMessage records);
  // What the next heartbeats say.
  void set_progress(WorkerState state, std::int64_t generation);
  // Runs the final GLOBAL gather with this payload; blocks until done.
  void gather_results(Bytes payload);
  // Asks run() to flush its sends, send a last heartbeat and return.
  void finish();

  // --- Communication thread ---
  void run();
  // One step; true if it did anything. Exposed for tests.
  bool run_once();

 private:
  void send_heartbeat();

  std::unique_ptr<Communicator> world_, global_, local_;
  const HaloPlan plan_;
  const std::chrono::milliseconds heartbeat_interval_;
  std::chrono::steady_clock::time_point last_heartbeat_{};

  std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_:
  struct Outgoing {
    bool to_local;  // LOCAL (halos) or WORLD (to the master)
    int dest;
    int tag;
    Bytes payload;
  };
  std::deque<Outgoing> outgoing_;
  std::map<std::pair<std::int64_t, int>, HaloMessage> halos_;  // (generation, cell)
  WorkerState state_ = WorkerState::kInactive;
  std::int64_t generation_ = 0;
  std::optional<Bytes> gather_payload_;
  bool gather_done_ = false;
  bool finish_requested_ = false;
};

}  // namespace cellgan
