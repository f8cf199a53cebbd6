// The worker's communication thread: it alone owns the worker's
// communicators (JobComms: WORLD, GLOBAL, LOCAL) once training starts. The
// training thread reaches it only through the methods below, which queue
// work and wait on a condition variable.
//
// Each run_once(now) step: start the allreduce the training thread asked
// for, or see whether it is done (it never blocks this thread, so beats and
// the stop protocol go on while the other workers catch up); send what the
// training thread queued; receive
// LOCAL messages into the store (by source and tag, in arrival order);
// receive the master's heartbeats and abort; send a heartbeat when it is
// due; wake waiting callers. run() loops run_once() and sleeps when there
// was nothing to do, backing off from 0.2 ms to 5 ms, so the thread never
// spins on the cores the training thread needs. A send queued by the
// training thread wakes it at once, and while the training thread waits for
// a worker's message or an allreduce it polls every 0.2 ms (the data-
// parallel all-reduces wait on a chain of such messages).
//
// A sum over some workers (allreduce_among) runs on a subgroup of LOCAL,
// made by this thread at the first such sum and kept until LOCAL changes.
// Making it is the one call here that blocks, for as long as the slowest
// member takes to join it (briefly: they have just shown each other
// alive with kTagGroup, and queued sends leave first); past 10 s the
// process exits 75 (common/comm/exit_unless_done.h).
//
// Deadlines: every wait of the training thread (receive_local,
// wait_for_done, ...) returns the Aborted interruption (worker_exchange.h)
// when the master aborts the run or has been silent for
// `master_dead_after`, and the Rehoming one when the master asks for it.
// At exit the last messages are flushed for at most that long in all (not
// at all when the master is lost). An exception on the communication
// thread itself ends the waits the same way, as Aborted (exit code
// kExitInternal for a std::logic_error, else kExitFailure), and the master
// is told when possible.
//
// Thread-safety: the WorkerExchange methods, report, set_progress,
// send_result, send_failure, finish, wait_for_done, flush_to_master, flush_all,
// aborted, master_lost,
// interrupted, stop_at and go_silent may be called from the training
// thread while run() runs on the communication thread; report_checkpoint
// from any thread (the checkpoint writer's, checkpoint_writer.h), since it
// only queues under the lock. run_once() belongs to one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "common/comm/job_comms.h"
#include "common/comm/protocol.h"
#include "common/error.h"
#include "common/thread_annotations.h"
#include "worker/worker_exchange.h"

namespace cellgan {

class WorkerComm final : public WorkerExchange {
 public:
  using Clock = std::chrono::steady_clock;

  // `comms` are this worker's communicators (world, global, local).
  WorkerComm(JobComms comms, std::chrono::milliseconds heartbeat_interval,
             std::chrono::milliseconds master_dead_after);

  // --- Training thread ---
  // LOCAL's rank and size never change once made, so reading them from
  // the training thread does not touch what the communication thread uses.
  int local_rank() const override;
  int local_size() const override;
  void send_local(int dest, int tag, Bytes payload) override;
  [[nodiscard]] Waited<Message> receive_local(int source, int tag) override;
  [[nodiscard]] Waited<std::optional<Message>> try_receive_local(int source, int tag) override;
  [[nodiscard]] std::optional<Interruption> allreduce_local(std::vector<float>& values) override;
  // The first call for a set of workers first shows they are alive (each
  // sends every other kTagGroup and waits for theirs), since making their
  // communicator waits for every one of them.
  [[nodiscard]] std::optional<Interruption> allreduce_among(const std::vector<int>& ranks,
                                                            std::vector<float>& values) override;
  // Queues a records message to the master.
  void report(const RecordsMessage& records);
  // What the next heartbeats say.
  void set_progress(WorkerState state, std::int64_t generation);
  // Queues the worker's result for the master (GLOBAL).
  void send_result(Bytes payload);
  // Blocks until the master says the run is done (kTagDone), after the
  // result: none then, else the interruption, as receive_local() returns it.
  [[nodiscard]] std::optional<Interruption> wait_for_done();
  // Queues the files of a checkpoint for the master.
  void report_checkpoint(const CheckpointMessage& message);
  // Blocks until everything queued for the master so far has been sent and
  // its sends have completed (a large message: the master has taken it), or
  // for master_dead_after at most: before a planned fault ends or silences
  // this worker, and before the result, so that the records and checkpoint
  // reports are in first. Returns the interruption as receive_local() does.
  [[nodiscard]] std::optional<Interruption> flush_to_master();
  // As flush_to_master(), and the sends to the other workers too (a large
  // one: the worker has taken it): before a planned fault ends or silences
  // this worker, so that what it owes them (a sharded optimizer's moments
  // for a checkpoint) is in their hands whatever the message's size.
  [[nodiscard]] std::optional<Interruption> flush_all();
  // The stop protocol (protocol.h). When the master asks the workers to
  // pause (kTagPause), the communication thread answers at once with the
  // generations done then, c (kTagPaused); the master then names the
  // generation T >= c + 1 every worker stops at (kTagStopAt). Called by the
  // training thread after each generation with the generations done:
  // returns T once known; blocks, when `completed` has reached c + 1 and T
  // is not known yet, until it is; none when no stop is under way. Or the
  // interruption, as receive_local() returns it.
  [[nodiscard]] Waited<std::optional<std::int64_t>> stop_at(std::int64_t completed);
  // Never blocks: the interruption a wait would return now (a rehoming is
  // taken: returned once), or none.
  [[nodiscard]] std::optional<Interruption> interrupted() override;
  // After a Rehoming: LOCAL becomes `local` (made by the survivors). What
  // was received or queued on the old LOCAL is dropped, and the old LOCAL
  // is released by the communication thread; returns once it has taken
  // the new one (none), or the abort that came first.
  [[nodiscard]] std::optional<Aborted> replace_local(std::unique_ptr<Communicator> local);
  // Queues a failure report for the master (with the exit code the run is
  // to end with) and sets the state to kFailed.
  void send_failure(const std::string& reason, int exit_code = kExitFailure);
  // Asks run() to flush its sends, send a last heartbeat and return.
  void finish();
  // Set once the master has aborted the run or is presumed dead.
  std::optional<AbortMessage> aborted();
  // True once the master is presumed dead: silent for master_dead_after.
  bool master_lost();
  // From now on the thread sends the master nothing (no heartbeats,
  // records, result or failure), as if the path to it had hung; it goes on
  // exchanging with the other workers and listening to the master. What
  // was queued before and not yet sent is dropped too. The fault
  // `drop-heartbeats` (fault_injector.h); the master declares the worker
  // dead after runtime.dead_after_ms.
  void go_silent();

  // --- Communication thread ---
  void run();
  // One step at time `now`; true if it did anything. Exposed for tests.
  bool run_once(Clock::time_point now);

 private:
  enum class Channel { kWorld, kGlobal, kLocal };
  struct Outgoing {
    Channel channel;
    int dest;
    int tag;
    Bytes payload;
  };
  void queue(Outgoing out);
  void send_heartbeat(Clock::time_point now);
  void flush_at_exit();
  // flush_to_master(), or flush_all() with `peers_too`.
  [[nodiscard]] std::optional<Interruption> flush(bool peers_too);
  // A sum under way that will never be waited for (a rehoming, the end):
  // its request and buffer are left to MPI, which may still write it.
  // run_once's step 3: the master's messages and whether it is silent too
  // long. Returns whether anything happened.
  bool take_from_master(Clock::time_point now);
  void abandon_pending_sum();
  // run_once's step 0: takes a new LOCAL, starts the sum asked for, sees
  // whether the one under way is done. Returns whether anything happened.
  bool step_sums();
  // run_once's step 1: sends what the training thread queued (WORLD and
  // GLOBAL not while silent). Returns whether it sent anything.
  bool send_queued();
  // Where a sum over `group` runs: LOCAL when it is empty, else the
  // subgroup of those LOCAL ranks (made now unless it is group_'s).
  Communicator& sum_communicator(const std::vector<int>& group);
  // The training thread's part of allreduce_local() and allreduce_among():
  // hands `values` over, waits for the sum.
  [[nodiscard]] std::optional<Interruption> sum_over(const std::vector<int>& group, std::vector<float>& values);
  // Sets abort_ (unless set) and wakes every waiter.
  void abort_locked(int exit_code, const std::string& reason) REQUIRES(mutex_);
  // The abort if any, else the rehoming if any (taken: rehome_ is
  // cleared), else none.
  std::optional<Interruption> interruption_locked() REQUIRES(mutex_);
  // A message from (source, tag) is waiting.
  bool has_message(const std::pair<int, int>& key) const REQUIRES(mutex_);
  Communicator& comm(Channel channel);

  JobComms comms_;
  const std::chrono::milliseconds heartbeat_interval_;
  const std::chrono::milliseconds master_dead_after_;
  Clock::time_point last_heartbeat_{};

  mutable Mutex mutex_;
  CondVar changed_;
  std::deque<Outgoing> outgoing_ GUARDED_BY(mutex_);
  // (source, tag) -> messages, in order
  std::map<std::pair<int, int>, std::deque<Message>> received_ GUARDED_BY(mutex_);
  WorkerState state_ GUARDED_BY(mutex_) = WorkerState::kInactive;
  std::int64_t generation_ GUARDED_BY(mutex_) = 0;
  Clock::time_point last_from_master_ GUARDED_BY(mutex_);
  std::optional<AbortMessage> abort_ GUARDED_BY(mutex_);
  bool finish_requested_ GUARDED_BY(mutex_) = false;
  std::optional<std::int64_t> pause_limit_ GUARDED_BY(mutex_);  // c + 1 of the stop protocol
  std::optional<std::int64_t> stop_at_ GUARDED_BY(mutex_);      // T
  std::optional<MembersMessage> rehome_ GUARDED_BY(mutex_);     // from the master, until the training thread takes it
  std::unique_ptr<Communicator> next_local_ GUARDED_BY(mutex_);  // handed over by replace_local()
  CondVar wake_;  // wakes run()'s idle sleep
  bool wake_requested_ GUARDED_BY(mutex_) = false;
  int waiters_ GUARDED_BY(mutex_) = 0;  // training-thread waits for LOCAL (receive_local, allreduce_local)
  std::optional<std::vector<float>> sum_in_ GUARDED_BY(mutex_);   // handed over by allreduce_local()
  std::vector<int> sum_group_ GUARDED_BY(mutex_);                 // its workers (empty: all of LOCAL)
  std::optional<std::vector<float>> sum_out_ GUARDED_BY(mutex_);  // its result, for allreduce_local()
  // The communication thread's own: the sum under way and its buffer.
  std::unique_ptr<Communicator::PendingSum> pending_sum_;
  std::vector<float> sum_buffer_;
  std::unique_ptr<Communicator> group_;  // the last subgroup of LOCAL summed over, of LOCAL ranks group_ranks_
  std::vector<int> group_ranks_;
  // The training thread's own: the workers that have shown each other they
  // are alive for allreduce_among() on this LOCAL.
  std::vector<int> group_shown_;
  bool silent_ GUARDED_BY(mutex_) = false;
  bool done_ GUARDED_BY(mutex_) = false;
  // WORLD and GLOBAL sends not completed, after the last run_once()
  std::size_t to_master_in_flight_ GUARDED_BY(mutex_) = 0;
  // LOCAL sends not completed, after the last run_once()
  std::size_t to_peers_in_flight_ GUARDED_BY(mutex_) = 0;
  // Taken from outgoing_ by send_queued() and not yet counted in flight
  bool sending_ GUARDED_BY(mutex_) = false;
  bool master_lost_ GUARDED_BY(mutex_) = false;
};

}  // namespace cellgan
