// The master rank (see master.h).
#include "master/master.h"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/checkpoint_store.h"
#include "common/error.h"
#include "common/idle_backoff.h"
#include "common/launch_rank.h"
#include "common/log.h"
#include "common/nn/scores.h"
#include "common/process_stats.h"
#include "common/run_status.h"
#include "common/nn/torch_generator_lock.h"
#include "master/job_status.h"
#include "master/progress_writer.h"
#include "master/run_directory.h"
#include "master/stop_protocol.h"
#include "master/stop_signals.h"
#include "master/beating_wait.h"
#include "master/checkpoint_collector.h"

namespace cellgan {
namespace {

// Workers on CPUs that OpenBLAS tells apart compute with kernels that round
// differently (math_kernels.h): the result then depends on which worker
// trains which cell. Said at the start, in the log and in events.log.
void warn_if_kernels_differ(const std::vector<std::string>& kernels, RunDirectory& run) {
  if (std::all_of(kernels.begin(), kernels.end(), [&](const std::string& k) { return k == kernels.front(); })) return;
  std::vector<std::string> ranks;
  for (std::size_t i = 0; i < kernels.size(); ++i) ranks.push_back(fmt::format("rank {}: {}", i + 1, kernels[i]));
  const std::string line = fmt::format(
      "the workers compute with different BLAS kernels ({}): the result depends on which worker trains which "
      "cell; export one OPENBLAS_CORETYPE to every rank (docs/operations.md)",
      fmt::join(ranks, ", "));
  log::warn("{}", line);
  run.event(line);
}

}  // namespace

Master::Master(JobCommsFactory& factory, std::string config_path, std::string resume,
               std::vector<Fault> command_line_faults, std::vector<std::string> settings)
    : factory_(factory),
      config_path_(std::move(config_path)),
      resume_(std::move(resume)),
      stop_(factory.world_size() - 1),
      command_line_faults_(std::move(command_line_faults)),
      settings_(std::move(settings)),
      workers_(factory.world_size() - 1),
      membership_(factory.world_size() - 1) {}

void Master::event(const std::string& line) {
  log::info("{}", line);
  if (run_) run_->event(line);
}

void Master::note_events(const std::vector<std::string>& lines) {
  pending_events_.insert(pending_events_.end(), lines.begin(), lines.end());
}

void Master::record_state(const std::string& status, std::optional<int> exit_code, const std::string& message) {
  if (writer_) writer_->record(status, exit_code, message);
}

void Master::request_stop(const std::string& why) { stop_.request(why); }

Master::~Master() = default;

bool Master::alive(int worker) const {
  return workers_started_ && !membership_.out(worker) &&
         (!monitor_ || monitor_->liveness(worker) != HeartbeatMonitor::Liveness::kDead);
}

void Master::fail_worker(int worker, const FailureMessage& failure) {
  membership_.fail(worker);
  show_worker(worker);
  const std::string what = fmt::format("worker rank {} failed: {}", worker, failure.reason);
  if (run_) run_->event(what + "; ending the run");
  if (failure.exit_code == kExitDiskFull) {
    abort_workers(kExitDiskFull, what);
    throw DiskFull(fmt::format("worker rank {}: {}", worker, failure.reason));
  }
  log::error("{}; ending the run", what);
  abort_workers(kExitFailure, what);
  throw std::runtime_error(what);
}

void Master::take(const Message& message, bool from_global, Clock::time_point now) {
  // GLOBAL's ranks are the master's and its members' at start-up, in order.
  const int w = from_global ? membership_.world_rank(message.source) : message.source;
  const std::size_t i = static_cast<std::size_t>(w - 1);
  if (w < 1 || w > workers_) throw std::logic_error(fmt::format("message from rank {}, not a worker", w));
  if (from_global && message.tag == kTagHello) {
    const HelloMessage hello = decode_hello(message.payload);
    worker_kernels_[i] = hello.blas_kernels;
    worker_devices_[i] = hello.device;
    monitor_->beat(w, WorkerState::kProcessing, 0, now);
    if (std::all_of(worker_kernels_.begin(), worker_kernels_.end(), [](const auto& k) { return k.has_value(); })) {
      std::vector<std::string> kernels;
      for (const auto& k : worker_kernels_) kernels.push_back(*k);
      warn_if_kernels_differ(kernels, *run_);
    }
  } else if (from_global && message.tag == kTagResult) {
    results_[i] = decode_result(message.payload);
    monitor_->beat(w, WorkerState::kFinished, config_.training.generations, now);
  } else if (!from_global && message.tag == kTagHeartbeat) {
    const HeartbeatMessage hb = decode_heartbeat(message.payload);
    // A worker is finished for the monitor once its result is in, whatever it says.
    const WorkerState state = hb.state == WorkerState::kFinished && !results_[i] ? WorkerState::kProcessing : hb.state;
    monitor_->beat(w, state, hb.generation, now);
  } else if (!from_global && message.tag == kTagRecords) {
    take_records(w, message.payload, now);
  } else if (!from_global && message.tag == kTagIdentity) {
    membership_.set_identity(w, decode_identity(message.payload));
  } else if (!from_global && message.tag == kTagReady) {
    log::debug("a late ready from worker rank {}, lost at start-up", w);
  } else if (!from_global && message.tag == kTagCheckpoint) {
    take_checkpoint(w, decode_checkpoint(message.payload));
  } else if (!from_global && message.tag == kTagPaused) {
    stop_.paused(w, decode_generation(message.payload, "paused message").generation);
  } else if (!from_global && message.tag == kTagFailure) {
    fail_worker(w, decode_failure(message.payload));
  } else {
    log::warn("ignoring a message with tag {} from rank {} on {}", message.tag, w, from_global ? "GLOBAL" : "WORLD");
    return;
  }
  board_->worker_heard(w, worker_status_name(monitor_->state(w), monitor_->liveness(w), membership_.failed(w)),
                       monitor_->generation(w), now);
}

void Master::take_records(int worker, const Bytes& payload, Clock::time_point now) {
  RecordsMessage records = decode_records(payload);
  monitor_->beat(worker, WorkerState::kProcessing, records.generation, now);
  for (const std::string& line : records.events) run_->event(fmt::format("worker rank {}: {}", worker, line));
  note_records(*board_, worker, records.generation, records.records, objective_name(config_));
  for (std::int64_t g : run_->add_records(records.generation, std::move(records.records)))
    writer_->generation_written(g, now);
}

void Master::show_worker(int worker) {
  if (!board_) return;
  const bool failed = membership_.failed(worker);
  board_->set_worker_state(worker, monitor_ ? worker_status_name(monitor_->state(worker), monitor_->liveness(worker), failed)
                                            : (failed ? "failed" : "dead"));
}

void Master::take_checkpoint(int worker, const CheckpointMessage& message) {
  for (const std::string& line : message.events) run_->event(line);
  log::debug("worker rank {} saved {} cells after generation {}", worker, message.files.size(), message.generation);
  if (const auto complete = checkpoints_->take(message)) {
    run_->event(*complete);
    writer_->report_at_checkpoint(Clock::now());
  }
}

void Master::advance_stop(Clock::time_point /*now*/) {
  using Kind = StopProtocol::Step::Kind;
  std::vector<bool> live(static_cast<std::size_t>(workers_));
  for (int w = 1; w <= workers_; ++w) live[static_cast<std::size_t>(w - 1)] = alive(w);
  const StopProtocol::Step step = stop_.advance(live, checkpoints_->last(), config_.training.generations);
  switch (step.kind) {
    case Kind::kNothing:
      return;
    case Kind::kPause:
      event(fmt::format("stop requested ({}): every worker checkpoints at the end of the current generation", step.why));
      for (int w = 1; w <= workers_; ++w)
        if (alive(w)) comms_.world->send(w, kTagPause, Bytes{});
      return;
    case Kind::kStopAt:
    case Kind::kFinishInstead:
      for (int w = 1; w <= workers_; ++w)
        if (alive(w)) comms_.world->send(w, kTagStopAt, encode(GenerationMessage{step.generation}));
      if (step.kind == Kind::kFinishInstead)
        event("the run is at its last generation: it finishes instead of stopping");
      else
        log::info("stopping after generation {}: waiting for its checkpoint", step.generation);
      return;
    case Kind::kStop: {
      // Under deploy/slurm/cellgan.sbatch the same sbatch line names a new
      // folder (runs/slurm-<jobid>): the way back is CELLGAN_RUN_DIR.
      const char* sbatch_dir = std::getenv("CELLGAN_SBATCH_RUN_DIR");
      const std::string how =
          sbatch_dir != nullptr && *sbatch_dir != '\0'
              ? fmt::format("a requeued job resumes by itself; else submit it again with CELLGAN_RUN_DIR={}",
                            sbatch_dir)
              : std::string("run the same command with --resume auto to continue");
      const std::string what =
          fmt::format("stopped after generation {} with a complete checkpoint: {}", step.generation, how);
      event(what);
      abort_workers(kExitRestart, what);
      throw RestartNeeded(what);
    }
  }
}

void Master::kill_worker(int worker) {
  if (const std::string line = membership_.kill(worker); !line.empty()) event(line);
}

std::int64_t Master::checkpoint_to_go_back_to(const std::string& context) {
  // A lost worker may have saved its cells and died before its report came:
  // such a checkpoint is complete by its cells' records. Only generations
  // the master has written count, so that metrics.jsonl goes on from there.
  const std::int64_t written = run_->generations_written();
  run_->sync_metrics();
  for (const std::string& folder : complete_from_records(config_.output_dir, written))
    event(fmt::format("checkpoint {} complete: every cell saved, not every report in (the manifest is written "
                      "from the cells' records)",
                      folder));
  // As --resume auto does: the newest complete checkpoint whose files pass
  // their checks (one the survivors cannot read would end the run).
  std::vector<std::string> skipped;
  const auto point = newest_complete_checkpoint(config_.output_dir, skipped, written);
  for (const std::string& line : skipped) event(context + "skipping checkpoint " + line);
  return point ? point->manifest.generation : 0;
}

void Master::lose_worker(int worker, const std::string& why) {
  membership_.lose(worker);
  show_worker(worker);
  event(fmt::format("worker rank {} is lost: {}", worker, why));
  kill_worker(worker);
  if (results_[static_cast<std::size_t>(worker - 1)]) {
    event(fmt::format("worker rank {} had sent its result: the run goes on", worker));
    return;
  }
  if (factory_.survives_rank_loss() && !stop_.active()) return rehome(worker, why);
  const std::int64_t last = checkpoint_to_go_back_to("");
  const std::string cannot = stop_.active() ? "a stop is under way, so the run does not rehome"
                                            : "the job cannot go on in place (that needs mpirun --enable-recovery)";
  const std::string from =
      last > 0 ? fmt::format("the run stops after its checkpoint of generation {}", last)
               : std::string("the run stops; it has no complete checkpoint yet, so it starts again from generation 0");
  const std::string what = fmt::format("worker rank {} is lost ({}) and {}: {}; run the same command with "
                                       "--resume auto to continue",
                                       worker, why, cannot, from);
  event(what);
  abort_workers(kExitRestart, what);
  throw RestartNeeded(what);
}

void Master::rehome(int worker, const std::string& why) {
  std::vector<int> survivors = membership_.survivors([this](int w) { return alive(w); });
  if (survivors.empty()) {
    const std::string what = fmt::format("worker rank {} is lost ({}) and no worker is left", worker, why);
    abort_workers(kExitFailure, what);
    throw std::runtime_error(what);
  }
  checkpoints_->restart_from(checkpoint_to_go_back_to("rehoming: "));
  for (auto& r : results_) r.reset();  // every cell goes back to the checkpoint
  const std::int64_t from = checkpoints_->last();
  const std::string folder = from > 0 ? checkpoint_folder(config_.output_dir, from) : "";
  const Bytes message = encode(membership_.rehome(std::move(survivors), from, folder));
  for (int w : membership_.members()) comms_.world->send(w, kTagRehome, message);
  event(fmt::format("rehoming: workers {} go on from generation {}{}", fmt::join(membership_.members(), ","), from,
                    folder.empty() ? " (the start)" : " (" + folder + ")"));
  for (const std::string& line : layout_->reassign(membership_.members())) run_->event(line);
}

void Master::check_liveness(Clock::time_point now) {
  for (const auto& ev : monitor_->check(now)) {
    if (membership_.lost(ev.worker)) continue;  // lost already
    show_worker(ev.worker);
    const std::string line =
        fmt::format("worker rank {} {}: silent for {:.1f} s", ev.worker, to_string(ev.kind), ev.silent_seconds);
    run_->event(line);
    if (ev.kind != HeartbeatMonitor::Event::Kind::kDead) {
      log::warn("{}", line);
      continue;
    }
    lose_worker(ev.worker, fmt::format("silent for {:.1f} s (runtime.dead_after_ms {})", ev.silent_seconds,
                                       config_.runtime.dead_after_ms));
  }
}

bool Master::run_once(Clock::time_point now) {
  busy_ = false;
  const auto dead_after = std::chrono::milliseconds(config_.runtime.dead_after_ms);
  if (last_round_ != Clock::time_point{} && now - last_round_ >= dead_after) {
    const double stalled = std::chrono::duration<double>(now - last_round_).count();
    log::warn("the master itself was stalled for {:.1f} s: its silence is not counted against the workers", stalled);
    run_->event(fmt::format("master stalled for {:.1f} s", stalled));
    monitor_->restart(now);
  }
  last_round_ = now;
  while (auto m = comms_.world->try_receive()) {
    busy_ = true;
    take(*m, false, now);
  }
  while (auto m = comms_.global->try_receive()) {
    busy_ = true;
    take(*m, true, now);
  }
  if (now - last_beat_sent_ >= std::chrono::milliseconds(config_.runtime.heartbeat_interval_ms)) {
    beat_to_workers(now);
  }
  if (test_stop_after_ >= 0 && run_->generations_written() >= test_stop_after_) {
    request_stop("test hook");
    test_stop_after_ = -1;
  }
  advance_stop(now);
  comms_.world->pending_sends();
  check_liveness(now);
  const std::vector<int>& members = membership_.members();
  const bool all_results = std::all_of(members.begin(), members.end(),
                                       [&](int w) { return results_[static_cast<std::size_t>(w - 1)].has_value(); });
  if (!all_results || run_->generations_written() < config_.training.generations) return true;
  // A worker's last checkpoint report (WORLD) left before its result
  // (GLOBAL: WorkerComm::flush_to_master), so it is here by now; taken
  // before the end, which takes no more messages.
  while (auto m = comms_.world->try_receive()) take(*m, false, now);
  return false;
}

void Master::beat_to_workers(Clock::time_point now) {
  for (int w = 1; w <= workers_; ++w)
    if (alive(w)) comms_.world->send(w, kTagMasterHeartbeat, Bytes{});
  last_beat_sent_ = now;
}

RunResult Master::finish() {
  std::vector<ResultMessage> results;
  for (int w : membership_.members()) results.push_back(std::move(*results_[static_cast<std::size_t>(w - 1)]));
  std::vector<std::string> kernels;
  for (const auto& k : worker_kernels_) kernels.push_back(k.value_or("unknown"));
  const auto lock = lock_torch_generator();
  FinishContext context{*scorer_, *run_, started_, master_kernels_, kernels, master_device_, worker_devices_};
  context.earlier_seconds = writer_->earlier_seconds();
  context.earlier_stretches = writer_->earlier_stretches();
  RunResult result = layout_->finish(std::move(results), context);
  record_state(status_word(RunStatus::kFinished), kExitOk);
  writer_->report();
  return result;
}

void Master::abort_workers(int exit_code, const std::string& reason) {
  if (!comms_.world || aborted_) return;
  aborted_ = true;
  const Bytes abort = encode(AbortMessage{exit_code, reason});
  for (int w = 1; w <= workers_; ++w)
    if (alive(w)) comms_.world->send(w, kTagAbort, abort);
  const auto timeout = std::chrono::milliseconds(config_.runtime.dead_after_ms);
  if (!flush_sends(*comms_.world, timeout)) log::warn("abort messages still in flight after {} ms", timeout.count());
}

// Named as a shell names it (SIGUSR1 is also what cellgan launch sends on an interrupt).
void Master::on_stop_signal(int number) {
  const char* name = number == SIGUSR1 ? "SIGUSR1"
                     : number == SIGTERM ? "SIGTERM"
                     : number == SIGINT  ? "SIGINT"
                                         : nullptr;
  std::string why = name ? fmt::format("signal {}", name) : fmt::format("signal {}", number);
  // mpirun ends every rank with SIGTERM when one of them dies (a worker
  // outlives it by half a second, interrupts.h): one worker process of
  // this host gone while the others still run is the one that died.
  // Without --enable-recovery the job cannot go on: that worker is lost,
  // and the run goes back to its last checkpoint. Several gone (the
  // master came late) are only named.
  if (number == SIGTERM && workers_started_) {
    std::vector<int> ended, here;  // of the workers the run still counts on
    for (int w : membership_.processes_ended())
      if (alive(w)) ended.push_back(w);
    for (int w : membership_.processes_on_this_host())
      if (alive(w)) here.push_back(w);
    if (ended.size() == 1 && here.size() >= 2 && !stop_.active() && !factory_.survives_rank_loss())
      lose_worker(ended.front(), fmt::format("its process, {}, has ended; mpirun ends every rank with SIGTERM "
                                             "when one dies",
                                             membership_.where(ended.front())));  // throws, unless it had finished
    else if (!ended.empty())
      why += fmt::format(", and {} {} on this host {} ended", ended.size() == 1 ? "the process of worker rank"
                                                                               : "the processes of worker ranks",
                         fmt::join(ended, ", "), ended.size() == 1 ? "has" : "have");
  }
  request_stop(why);
}

RunResult Master::run() {
  StopSignals signals([this](int number) { on_stop_signal(number); });
  try {
    start(Clock::now());
    // Idle back-off (1 ms doubling to 20 ms): the master shares the cores
    // with the workers, and nothing it waits for needs a faster answer.
    IdleBackoff backoff(std::chrono::milliseconds(1), std::chrono::milliseconds(20));
    BeatTimer launcher_check(std::chrono::seconds(1)), touch(std::chrono::seconds(10));
    for (;;) {
      signals.poll();
      if (launcher_check.due() && launcher_gone()) request_stop("cellgan launch, which started the job, is gone");
      // The master's sign of life for the launcher's stall deadline, however
      // long a generation takes (its workers' liveness is the master's job).
      if (touch.due()) touch_run_state(config_.output_dir);
      if (!run_once(Clock::now())) break;
      backoff.after_round(busy_);
    }
    writer_->end_progress();
    board_->set_phase("scoring", "the final ensembles");
    // Scoring can take long: it runs on a thread of its own while this one
    // goes on beating, so the workers waiting for the end do not give up.
    // run.json's time is touched meanwhile, so the launcher sees it alive.
    RunResult result;
    run_while_beating([&] { result = finish(); }, std::chrono::milliseconds(config_.runtime.heartbeat_interval_ms),
                      [this] { beat_to_workers(Clock::now()); },
                      [this, &touch] {
                        while (comms_.world->try_receive()) {
                        }
                        comms_.world->pending_sends();
                        if (touch.due()) touch_run_state(config_.output_dir);
                      },
                      "score", factory_.world_rank());
    board_->set_phase("finished", fmt::format("best: {}", result.best));
    for (int w = 1; w <= workers_; ++w)
      if (alive(w)) comms_.world->send(w, kTagDone, Bytes{});
    if (!flush_sends(*comms_.world, std::chrono::milliseconds(config_.runtime.dead_after_ms)))
      log::warn("the end of the run did not reach every worker within runtime.dead_after_ms");
    log::info("master done: peak RSS {:.1f} MB", static_cast<double>(peak_rss_bytes()) / 1e6);
    return result;
  } catch (const std::exception& e) {
    if (writer_) writer_->end_progress();
    if (board_) board_->set_phase("failed", e.what());
    if (workers_started_) abort_workers(exit_code_of(e), e.what());
    try {
      const int code = exit_code_of(e);
      record_state(status_word(status_of(code)), code, e.what());
      // Before the report (images, seconds on a large run): a starter that
      // ends the ranks meanwhile (mpirun after a lost rank) leaves the code.
      report_exit_code(code);
      if (writer_ && code != kExitDiskFull) writer_->report();
    } catch (const std::exception& also) {
      // A full disk with no room even for run.json is said once, by main().
      if (exit_code_of(also) != kExitDiskFull) log::warn("{}", also.what());
    }
    throw;
  }
}

}  // namespace cellgan
