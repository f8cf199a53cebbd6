// The master rank of a cellgan job (docs/architecture.md, "Processes and threads"): validates the input, hands
// the configuration to the workers, watches their heartbeats, writes the
// metrics as generations complete, and at the end hands the workers'
// results to its layout (master_layout.h), which scores and writes them.
// Runs the same over MPI and in one process with its workers
// (JobCommsFactory); its loop is a step, run_once(now), so a test can
// drive it with a clock of its own.
//
// Endings (common/error.h codes; main maps exceptions to them):
// - finished: run() returns the result (kExitOk).
// - bad input (configuration, worker count, data, classifier, a finished
//   output directory, a fault that does not fit the run): InputError before anything is written; the workers
//   are told first and exit with kExitBadInput.
// - a worker reports a failure, or is silent for runtime.dead_after_ms:
//   events.log and the log say which and why; every other live worker is
//   sent an abort, and run() throws std::runtime_error (kExitFailure).
// - stopped (request_stop(): a signal): the workers checkpoint at one
//   generation, the master writes the manifest, tells them to exit with
//   kExitRestart and throws RestartNeeded.
//   worker_lost() says whether a worker was declared dead: the process must
//   then not wait for it in MPI_Finalize.
// - the run folder disappears or can no longer be written: noticed at the
//   next written generation (run.json is rewritten then), a failure like
//   any other below.
// - any other exception on the master: every live worker is sent an abort
//   with the exit code of the exception's kind (exit_code_of, error.h),
//   then it is rethrown.
// run.json (common/run_state.h) says which: "running" from start() on,
// then "finished", "stopped" or "failed" with the exit code.
// Nothing is ever sent to a worker declared dead: under Open MPI a send to
// a dead rank can hang MPI_Finalize (docs/architecture.md, "No rank waits
// forever").
//
// Parts, each an object of its own that Master holds and calls in order:
// the start-up handshake with the workers (startup_handshake.h), who the
// workers are and rehoming (worker_membership.h), what is written about
// the run as it goes (progress_writer.h), checkpoint manifests
// (checkpoint_collector.h), the stop protocol (stop_protocol.h) and the
// layout (master_layout.h). Master keeps the control loop (master.cpp) and
// the order of start-up (master_startup.cpp).
//
// Live status (job_status.h): start() makes a StatusBoard, and with
// status.port a StatusServer on a thread of its own that reads it; the
// control loop writes the board as records, heartbeats and events come in.
//
// Thread-safety: one thread (the master's main thread), once.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/comm/job_comms.h"
#include "common/comm/protocol.h"
#include "common/config.h"
#include "common/run_state.h"
#include "master/heartbeat_monitor.h"
#include "master/master_layout.h"
#include "master/resume_plan.h"
#include "master/stop_protocol.h"
#include "master/worker_membership.h"

namespace cellgan {

class CheckpointCollector;
class ProgressWriter;
class RunDirectory;
class RunLock;
class SampleScorer;
class StatusBoard;
class StatusServer;

class Master {
 public:
  using Clock = std::chrono::steady_clock;

  // `resume`: "" (a new run), "auto" or a checkpoint folder (resume_plan.h).
  // `command_line_faults` (the --fault options of `cellgan train`) join
  // the configuration's `faults` once checked against it and the worker
  // count; the workers and config.yaml get them all. `settings` (the
  // --set options, "grid.rows=3") change keys of the file before it is
  // checked (load_config in config.h).
  Master(JobCommsFactory& factory, std::string config_path, std::string resume = "",
         std::vector<Fault> command_line_faults = {}, std::vector<std::string> settings = {});
  ~Master();
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  // Reads and validates the configuration and the input, tells every
  // worker the verdict, waits until every worker is ready (deadline
  // runtime.dead_after_ms), then builds GLOBAL and the run directory.
  // Throws InputError (after telling the workers) on bad input.
  void start(Clock::time_point now);
  // One step of the control loop at time `now`: takes in the workers'
  // messages, writes complete generations, beats to the workers when due,
  // and checks their liveness. Returns false once every generation is
  // written and every worker's result is in. Throws as described above.
  bool run_once(Clock::time_point now);
  // Hands the results to the layout: scores, chooses, writes.
  RunResult finish();

  // start(), run_once() until done (sleeping a little when idle), and
  // finish() on a thread of its own while this one keeps beating; then
  // tells the workers the run is done (kTagDone). With the real clock. On
  // any exception the live workers are sent an abort first.
  RunResult run();

  // Lines for events.log from whoever started the job (`cellgan launch`'s
  // restarts, common/launch_rank.h); written once the run folder exists.
  // Call before run().
  void note_events(const std::vector<std::string>& lines);

  bool worker_lost() const { return membership_.any_lost(); }
  // Kills by PID every worker process on this host that is still there
  // (at the end of the job: one stopped or hung after its part was done,
  // which would keep MPI_Finalize and the launcher waiting). Thread-safe
  // once start() has returned.
  void kill_remaining_workers() const { membership_.kill_remaining(); }

  // Asks the run to stop after a checkpoint: every worker runs to the
  // generation the furthest one has reached, saves its cells there, and
  // the run ends with RestartNeeded (exit 75); a run already at its last
  // generation just finishes. `why` goes to the log and events.log. Safe
  // from any thread and from a signal's handler thread; the control loop
  // acts on it in its next run_once().
  void request_stop(const std::string& why);
  // Test hook: request_stop() once `generation` generations are written.
  void TEST_stop_after(std::int64_t generation) { test_stop_after_ = generation; }
  // Sends every worker still running an AbortMessage; waits a bounded time
  // for the sends to leave.
  void abort_workers(int exit_code, const std::string& reason);

 private:
  // Reads and validates the configuration and the input (InputError); the
  // start message for the workers.
  StartMessage check_input();
  // The workers not ready by the deadline are lost: the run goes on without
  // them when the job survives a lost rank and some are ready, and
  // otherwise fails (std::runtime_error).
  void go_on_without(const std::vector<int>& silent, bool some_ready, std::chrono::milliseconds dead_after);
  // GLOBAL, the run folder and what is written about the run at the start.
  void open_run(Clock::time_point now, Clock::time_point entered);
  void take_checkpoint(int worker, const CheckpointMessage& message);
  // A worker is declared lost: killed by PID when it runs on this host;
  // the run goes on when its result is in, goes on in place without it
  // (kTagRehome to the survivors, from the last checkpoint) when the job
  // survives a lost rank, and otherwise stops for a restart (RestartNeeded).
  void lose_worker(int worker, const std::string& why);
  // SIGTERM, SIGINT or SIGUSR1 (StopSignals): a stop, or under mpirun a
  // worker process of this host that has ended, lost (lose_worker).
  void on_stop_signal(int number);
  void rehome(int worker, const std::string& why);
  void kill_worker(int worker);
  // After a lost worker: the generation of the newest complete checkpoint
  // the run can go back to (0: none), of at most the generations written;
  // the manifests of those complete by their cells' records are written
  // first. events.log says which, and what was skipped (each line after
  // `context`).
  std::int64_t checkpoint_to_go_back_to(const std::string& context);
  // The stop protocol, step by step (request_stop()).
  void advance_stop(Clock::time_point now);
  // A line in events.log (once it exists) and the log.
  void event(const std::string& line);
  // A worker reported a failure: says so (log, events.log once the run
  // directory exists), aborts the others, and throws std::runtime_error;
  // a full disk (kExitDiskFull) is said once, by the DiskFull thrown.
  [[noreturn]] void fail_worker(int worker, const FailureMessage& failure);
  void take(const Message& message, bool from_global, Clock::time_point now);
  void take_records(int worker, const Bytes& payload, Clock::time_point now);
  void check_liveness(Clock::time_point now);
  void beat_to_workers(Clock::time_point now);
  // run.json with `status`, once the run folder exists (progress_writer.h).
  void record_state(const std::string& status, std::optional<int> exit_code = std::nullopt,
                    const std::string& message = "");
  // Started, not failed, not declared dead: the workers messages go to.
  bool alive(int worker) const;
  // The worker's state on the status board, from the monitor and membership.
  void show_worker(int worker);

  JobCommsFactory& factory_;
  const std::string config_path_;
  const std::string resume_;
  ResumePlan plan_;
  std::unique_ptr<CheckpointCollector> checkpoints_;  // from start(): manifests of complete checkpoints
  StopProtocol stop_;  // request_stop() (any thread) -> pausing -> stopping (stop_protocol.h)
  std::int64_t test_stop_after_ = -1;
  const std::vector<Fault> command_line_faults_;
  const std::vector<std::string> settings_;
  const int workers_;
  WorkerMembership membership_;  // who the workers are: lost, failed, members, epoch, processes
  Clock::time_point started_{};
  Config config_;
  std::unique_ptr<SampleScorer> scorer_;
  std::unique_ptr<MasterLayout> layout_;
  JobComms comms_;
  std::unique_ptr<RunLock> lock_;  // the run folder's, from start() to the end of the process
  std::unique_ptr<RunDirectory> run_;
  std::unique_ptr<ProgressWriter> writer_;  // run.json, progress, report.html: from when run_ exists
  std::unique_ptr<HeartbeatMonitor> monitor_;
  std::unique_ptr<StatusBoard> board_;     // the live status (job_status.h)
  std::unique_ptr<StatusServer> status_;   // serves board_ when status.port != 0; destroyed before it
  bool workers_started_ = false;  // they were sent an ok start message
  bool busy_ = false;     // the last run_once() received something
  bool aborted_ = false;  // the workers were sent an abort
  Clock::time_point last_round_{};  // the last run_once()
  Clock::time_point last_beat_sent_{};
  std::string master_kernels_;
  std::vector<std::optional<std::string>> worker_kernels_;  // by worker, rank 1 first
  std::string master_device_ = "cpu";       // common/nn/device.h: describe_device()
  std::vector<std::string> worker_devices_;  // by worker, rank 1 first, from their hello
  std::vector<std::optional<ResultMessage>> results_;       // by worker
  std::vector<std::string> pending_events_;  // for events.log once it exists
};

}  // namespace cellgan
