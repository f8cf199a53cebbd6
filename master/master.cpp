// The master rank (see master.h).
#include "master/master.h"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include <csignal>
#include <unistd.h>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "common/checkpoint_store.h"
#include "common/error.h"
#include "common/idle_backoff.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/nn/device.h"
#include "common/nn/scores.h"
#include "common/process_stats.h"
#include "common/nn/torch_generator_lock.h"
#include "master/job_status.h"
#include "master/progress_line.h"
#include "master/run_directory.h"
#include "master/stop_signals.h"
#include "master/sample_png.h"

namespace cellgan {
namespace {

struct BestCell {
  int cell = -1;
  double score = INFINITY;
};

// The cell whose mixture scored lowest under `objective` in a generation.
BestCell best_cell(const std::map<int, GenerationRecord>& records, const std::string& objective) {
  BestCell best;
  for (const auto& [cell, record] : records) {
    const auto it = record.scores.find(objective);
    if (it != record.scores.end() && it->second < best.score) best = {cell, it->second};
  }
  return best;
}

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

// Checks the configuration's faults against the worker count and the
// command line's against the run, then adds the latter to `config`.
void add_faults(Config& config, const std::vector<Fault>& command_line, int workers) {
  for (std::size_t i = 0; i < config.faults.size(); ++i)
    if (const auto misfit = fault_misfit(config.faults[i], config, workers))
      throw InputError(fmt::format("{}: faults[{}].{}: {}", config.source, i, misfit->param, misfit->what));
  for (const Fault& f : command_line) {
    if (const auto misfit = fault_misfit(f, config, workers))
      throw InputError(fmt::format("--fault '{}': {}: {}", to_text(f), misfit->param, misfit->what));
    config.faults.push_back(f);
  }
  for (const Fault& f : config.faults)
    if (f.kind == FaultKind::kCorruptCheckpoint &&
        (config.checkpoint.every == 0 || f.gen % config.checkpoint.every != 0 || f.gen >= config.training.generations))
      throw InputError(fmt::format("{}: fault {}: gen {} is not a checkpoint of the run: expected a multiple of "
                                   "checkpoint.every ({}) below training.generations ({})",
                                   config.source, to_text(f), f.gen, config.checkpoint.every,
                                   config.training.generations));
}

}  // namespace

Master::Master(JobCommsFactory& factory, std::string config_path, std::string resume,
               std::vector<Fault> command_line_faults, std::vector<std::string> settings)
    : factory_(factory),
      config_path_(std::move(config_path)),
      resume_(std::move(resume)),
      command_line_faults_(std::move(command_line_faults)),
      settings_(std::move(settings)),
      workers_(factory.world_size() - 1) {}

void Master::event(const std::string& line) {
  log::info("{}", line);
  if (run_) run_->event(line);
}

void Master::note_events(const std::vector<std::string>& lines) {
  pending_events_.insert(pending_events_.end(), lines.begin(), lines.end());
}

void Master::record_state(const std::string& status, std::optional<int> exit_code, const std::string& message) {
  if (!run_) return;
  run_state_.status = status;
  run_state_.exit_code = exit_code;
  run_state_.message = message;
  run_state_.generation = run_->generations_written();
  if (const std::string why = write_run_state(config_.output_dir, run_state_); !why.empty())
    throw std::runtime_error(fmt::format("{}: the run folder can no longer be written ({}): ending the run; its "
                                         "newest complete checkpoint, if the folder still holds it, resumes it",
                                         config_.output_dir, why));
}

void Master::request_stop(const std::string& why) {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  if (!stop_request_) stop_request_ = why;
}

Master::~Master() = default;

bool Master::alive(int worker) const {
  const std::size_t i = static_cast<std::size_t>(worker - 1);
  return workers_started_ && !failed_[i] && !lost_[i] &&
         (!monitor_ || monitor_->liveness(worker) != HeartbeatMonitor::Liveness::kDead);
}

void Master::fail_worker(int worker, const std::string& reason) {
  failed_[static_cast<std::size_t>(worker - 1)] = true;
  show_worker(worker);
  const std::string what = fmt::format("worker rank {} failed: {}", worker, reason);
  if (run_) run_->event(what + "; ending the run");
  log::error("{}; ending the run", what);
  abort_workers(kExitFailure, what);
  throw std::runtime_error(what);
}

void Master::wait_until_ready() {
  const auto dead_after = std::chrono::milliseconds(config_.runtime.dead_after_ms);
  const auto deadline = Clock::now() + dead_after;
  std::vector<bool> ready(static_cast<std::size_t>(workers_), false);
  std::size_t count = 0;
  IdleBackoff backoff(std::chrono::microseconds(200), std::chrono::milliseconds(5));
  const auto interval = std::chrono::milliseconds(config_.runtime.heartbeat_interval_ms);
  auto last_beat = Clock::now();
  while (count < ready.size()) {
    if (Clock::now() - last_beat >= interval) {  // the ready workers wait for go with a deadline
      for (int w = 1; w <= workers_; ++w)
        if (ready[static_cast<std::size_t>(w - 1)]) comms_.world->send(w, kTagMasterHeartbeat, Bytes{});
      comms_.world->pending_sends();
      last_beat = Clock::now();
    }
    auto msg = comms_.world->try_receive();
    if (!msg) {
      if (Clock::now() < deadline) {
        backoff.after_round(false);
        continue;
      }
      std::vector<int> silent;
      for (int w = 1; w <= workers_; ++w)
        if (!ready[static_cast<std::size_t>(w - 1)]) {
          silent.push_back(w);
          lost_[static_cast<std::size_t>(w - 1)] = true;
          show_worker(w);
        }
      worker_lost_ = true;
      const std::string what = fmt::format("worker rank {} did not get ready within runtime.dead_after_ms ({} ms)",
                                           fmt::join(silent, ", "), dead_after.count());
      if (factory_.survives_rank_loss() && count > 0) {
        log::warn("{}: going on without it", what);
        pending_events_.push_back(what + ": going on without it");
        for (int w : silent) kill_worker(w);
        break;
      }
      log::error("{}", what);
      abort_workers(kExitFailure, what);
      throw std::runtime_error(what);
    }
    backoff.after_round(true);
    const std::size_t i = static_cast<std::size_t>(msg->source - 1);
    if (msg->tag == kTagIdentity) {
      take_identity(msg->source, msg->payload);
      continue;
    }
    if (msg->tag == kTagMasterHeartbeat || msg->tag == kTagHeartbeat) continue;
    if (msg->tag == kTagFailure) fail_worker(msg->source, decode_failure(msg->payload).reason);
    if (msg->tag != kTagReady)
      throw std::logic_error(fmt::format("start-up: tag {} from worker rank {} before it was ready", msg->tag,
                                         msg->source));
    if (!ready[i]) ++count;
    ready[i] = true;
  }
  members_.clear();
  for (int w = 1; w <= workers_; ++w)
    if (ready[static_cast<std::size_t>(w - 1)]) members_.push_back(w);
  const Bytes go = encode(MembersMessage{std::vector<std::int32_t>(members_.begin(), members_.end()), 0, "",
                                         kLocalGroupTag});
  for (int w : members_) comms_.world->send(w, kTagGo, go);
}

void Master::take_identity(int worker, const Bytes& payload) {
  const IdentityMessage id = decode_identity(payload);
  identities_[static_cast<std::size_t>(worker - 1)] = id;
}

namespace {

// A worker process the master may kill: on its own host, and never the
// master itself (one-process jobs).
bool killable(const IdentityMessage& id) {
  return id.pid > 0 && id.host == host_name() && id.pid != ::getpid();
}

}  // namespace

void Master::kill_worker(int worker) {
  const IdentityMessage& id = identities_[static_cast<std::size_t>(worker - 1)];
  if (!killable(id)) return;
  if (::kill(static_cast<pid_t>(id.pid), SIGKILL) == 0)
    event(fmt::format("killed worker rank {} (pid {} on {}), so that the job can end cleanly", worker, id.pid,
                      id.host));
}

void Master::kill_remaining_workers() const {
  for (std::size_t i = 0; i < identities_.size(); ++i) {
    const IdentityMessage& id = identities_[i];
    if (!killable(id) || ::kill(static_cast<pid_t>(id.pid), 0) != 0) continue;  // not ours, or gone
    log::warn("worker rank {} (pid {}) is still there at the end of the job: killing it", i + 1, id.pid);
    ::kill(static_cast<pid_t>(id.pid), SIGKILL);
  }
}

void Master::lose_worker(int worker, const std::string& why) {
  const std::size_t i = static_cast<std::size_t>(worker - 1);
  lost_[i] = true;
  worker_lost_ = true;
  show_worker(worker);
  event(fmt::format("worker rank {} is lost: {}", worker, why));
  kill_worker(worker);
  if (results_[i]) {
    event(fmt::format("worker rank {} had sent its result: the run goes on", worker));
    return;
  }
  if (!factory_.survives_rank_loss() || stop_ != Stop::kNone) {
    const std::string what = fmt::format(
        "worker rank {} is lost ({}) and the job cannot go on in place (that needs mpirun --enable-recovery): the "
        "run stops after its checkpoint of generation {}; run the same command with --resume auto to continue",
        worker, why, last_checkpoint_);
    event(what);
    abort_workers(kExitRestart, what);
    throw RestartNeeded(what);
  }
  std::vector<int> survivors;
  for (int w : members_)
    if (alive(w)) survivors.push_back(w);
  if (survivors.empty()) {
    const std::string what = fmt::format("worker rank {} is lost ({}) and no worker is left", worker, why);
    abort_workers(kExitFailure, what);
    throw std::runtime_error(what);
  }
  members_ = survivors;
  ++epoch_;
  // Go back to the newest complete checkpoint whose files pass their
  // checks, as --resume auto does: one the survivors cannot read would end
  // the run. Newer folders are still being written, or never will be.
  std::vector<std::string> skipped;
  const auto point = newest_complete_checkpoint(config_.output_dir, skipped, last_checkpoint_);
  for (const std::string& line : skipped) event("rehoming: skipping checkpoint " + line);
  last_checkpoint_ = point ? point->manifest.generation : 0;
  for (auto& r : results_) r.reset();  // every cell goes back to the checkpoint
  const std::string folder = last_checkpoint_ > 0 ? checkpoint_folder(config_.output_dir, last_checkpoint_) : "";
  const Bytes rehome = encode(MembersMessage{std::vector<std::int32_t>(members_.begin(), members_.end()),
                                             last_checkpoint_, folder, kLocalGroupTag + 1000 * epoch_});
  for (int w : members_) comms_.world->send(w, kTagRehome, rehome);
  event(fmt::format("rehoming: workers {} go on from generation {}{}", fmt::join(members_, ","), last_checkpoint_,
                    folder.empty() ? " (the start)" : " (" + folder + ")"));
  for (const std::string& line : layout_->reassign(members_)) run_->event(line);
}

void Master::validate() {
  std::exception_ptr error;
  std::atomic<bool> checked{false};
  std::thread checking([&] {
    log::set_thread_name("check");
    log::set_thread_rank(factory_.world_rank());
    try {
      config_ = load_config(config_path_, settings_);
      log::set_level(log::parse_level(config_.runtime.log_level));
      torch::set_num_threads(static_cast<int>(config_.runtime.threads));
      if (workers_ < 1)
        throw InputError(fmt::format("{}: workers: the job has 1 rank: expected a master and at least one worker, "
                                     "e.g. mpirun -np 3 cellgan train {}",
                                     config_.source, config_.source));
      layout_ = make_master_layout(config_, workers_);
      add_faults(config_, command_line_faults_, workers_);
      plan_ = plan_resume(config_, resume_);
      board_ = make_job_status_board(config_, objective_name(config_), workers_, Clock::now());
      status_ = start_status_server(config_, *board_);  // InputError if its port is taken
      const auto lock = lock_torch_generator();
      const torch::Device device = resolve_device(config_.runtime.device);  // InputError: no such GPU
      master_device_ = describe_device(device);
      scorer_ = make_scorer(config_, device);  // checks the data and the classifier
    } catch (...) {
      error = std::current_exception();
    }
    checked = true;
  });
  // The workers wait for the start message with the default deadline; the
  // heartbeats tell them the master is alive while it reads its inputs.
  const auto interval = std::chrono::milliseconds(RuntimeConfig{}.heartbeat_interval_ms);
  auto last = Clock::now() - interval;
  while (!checked) {
    if (Clock::now() - last >= interval) {
      for (int w = 1; w <= workers_; ++w) comms_.world->send(w, kTagMasterHeartbeat, Bytes{});
      last = Clock::now();
    }
    comms_.world->pending_sends();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  checking.join();
  if (error) std::rethrow_exception(error);
}

void Master::start(Clock::time_point now) {
  started_ = now;
  const auto entered = Clock::now();  // `now` may be a test's clock; waits below take real time
  comms_.world = factory_.world();
  results_.assign(static_cast<std::size_t>(std::max(workers_, 0)), std::nullopt);
  worker_kernels_.assign(results_.size(), std::nullopt);
  worker_devices_.assign(results_.size(), "unknown");
  failed_.assign(results_.size(), false);
  lost_.assign(results_.size(), false);
  identities_.assign(results_.size(), IdentityMessage{});
  paused_at_.assign(results_.size(), std::nullopt);

  // 1. Validate, then tell the workers either way.
  try {
    validate();
  } catch (const std::exception& e) {
    const Bytes no = encode(StartMessage{false, exit_code_of(e), e.what(), "", "", 0, ""});
    for (int w = 1; w <= workers_; ++w) comms_.world->send(w, kTagStart, no);
    flush_sends(*comms_.world, start_timeout());
    throw;
  }
  const Bytes yes =
      encode(StartMessage{true, 0, "", to_yaml(config_), config_.source, plan_.generation, plan_.folder});
  for (int w = 1; w <= workers_; ++w) comms_.world->send(w, kTagStart, yes);
  workers_started_ = true;
  wait_until_ready();

  // 2. GLOBAL = the master and every worker; the run directory.
  global_ranks_ = members_;
  global_ranks_.insert(global_ranks_.begin(), kMasterRank);
  comms_.global = factory_.group(global_ranks_, kGlobalGroupTag);
  run_ = std::make_unique<RunDirectory>(config_, layout_->records_per_generation(),
                                        plan_.resuming ? plan_.generation : -1);
  run_->on_event([board = board_.get()](const std::string& line) { board->event(line, Clock::now()); });
  board_->set_phase("training");
  progress_bar_ = stderr_is_terminal();
  for (const std::string& line : plan_.notes) event(line);
  for (const std::string& line : pending_events_) run_->event(line);
  if (static_cast<int>(members_.size()) < workers_)
    for (const std::string& line : layout_->reassign(members_)) run_->event(line);
  last_checkpoint_ = plan_.generation;
  for (const std::string& line : layout_->assignment()) run_->event(line);
  for (const Fault& f : config_.faults) run_->event(fmt::format("fault planned: {} ({})", describe(f), to_text(f)));
  run_state_ = RunState{};
  run_state_.layout = to_string(config_.layout);
  run_state_.rows = static_cast<int>(config_.grid.rows);
  run_state_.cols = static_cast<int>(config_.grid.cols);
  run_state_.workers = workers_;
  run_state_.device = master_device_;
  run_state_.seed = config_.seed;
  run_state_.generations = config_.training.generations;
  if (plan_.resuming) {
    try {
      if (const auto before = read_run_state(config_.output_dir)) run_state_.stretches = before->stretches + 1;
    } catch (const std::runtime_error& e) {
      log::warn("{}; counting this start as the run's first", e.what());
    }
  }
  record_state("running");
  master_kernels_ = blas_kernels();
  log::info("run {}: {}x{} grid, {} worker{}, {} generations, writing {}; master on {} kernels", config_.source,
            config_.grid.rows, config_.grid.cols, workers_, workers_ == 1 ? "" : "s", config_.training.generations,
            config_.output_dir, master_kernels_);
  log::info("master: device {} ({} GPU{} visible)", master_device_, visible_gpus(), visible_gpus() == 1 ? "" : "s");
  // The workers waited for go without beating: their silence counts from
  // now, not from when start() began, which may be a whole dead_after
  // earlier when the master waited out a worker that never got ready.
  monitor_ = std::make_unique<HeartbeatMonitor>(workers_, std::chrono::milliseconds(config_.runtime.late_after_ms),
                                                std::chrono::milliseconds(config_.runtime.dead_after_ms),
                                                now + (Clock::now() - entered));
}

void Master::write_progress(std::int64_t generation, Clock::time_point now) {
  record_state("running");
  const std::string objective = objective_name(config_);
  const BestCell best = best_cell(run_->generation_records(generation), objective);
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  const std::int64_t total = config_.training.generations;
  const double done = static_cast<double>(generation - plan_.generation);  // this session's generations
  const double eta = elapsed / done * static_cast<double>(total - generation);
  const std::optional<int> best_cell = best.cell >= 0 ? std::optional<int>(best.cell) : std::nullopt;
  const std::optional<double> best_score = best.cell >= 0 ? std::optional<double>(best.score) : std::nullopt;
  board_->generation_written(generation, now, best_cell, best_score);
  const std::string scored = best.cell >= 0  // data_parallel scores only some generations
                                 ? fmt::format("best mixture {} {:.4f} (cell {})", objective, best.score, best.cell)
                                 : std::string("not scored");
  const std::string line =
      fmt::format("generation {}/{}: {}, {:.1f} s elapsed, ~{:.0f} s left", generation, total, scored, elapsed, eta);
  if (progress_bar_) {  // a terminal: one line redrawn in place
    log::show_status_line(progress_line(Progress{generation, total, objective, best_cell, best_score, eta}));
    log::debug("{}", line);
  } else {
    log::info("{}", line);
  }
  // previews/gen-NNNNNN.png: the samples the generation's best cell sent.
  auto previews = run_->take_previews(generation);
  const auto it = previews.find(best.cell);
  if (it == previews.end()) return;
  const std::string path = run_->path(fmt::format("previews/gen-{:06d}.png", generation));
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_samples_png(config_, path, it->second);
  board_->preview(generation, path);
  log::debug("preview of generation {} (cell {}): {}", generation, best.cell, path);
}

void Master::take(const Message& message, bool from_global, Clock::time_point now) {
  // GLOBAL's ranks are the master's and its members' at start-up, in order.
  const int w = from_global ? global_ranks_.at(static_cast<std::size_t>(message.source)) : message.source;
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
    RecordsMessage records = decode_records(message.payload);
    monitor_->beat(w, WorkerState::kProcessing, records.generation, now);
    for (const std::string& line : records.events) run_->event(fmt::format("worker rank {}: {}", w, line));
    note_records(*board_, w, records.generation, records.records, objective_name(config_));
    for (std::int64_t g : run_->add_records(records.generation, std::move(records.records))) write_progress(g, now);
  } else if (!from_global && message.tag == kTagIdentity) {
    take_identity(w, message.payload);
  } else if (!from_global && message.tag == kTagReady) {
    log::debug("a late ready from worker rank {}, lost at start-up", w);
  } else if (!from_global && message.tag == kTagCheckpoint) {
    take_checkpoint(w, decode_checkpoint(message.payload));
  } else if (!from_global && message.tag == kTagPaused) {
    paused_at_[i] = decode_generation(message.payload, "paused message").generation;
  } else if (!from_global && message.tag == kTagFailure) {
    fail_worker(w, decode_failure(message.payload).reason);
  } else {
    log::warn("ignoring a message with tag {} from rank {} on {}", message.tag, w, from_global ? "GLOBAL" : "WORLD");
    return;
  }
  board_->worker_heard(w, worker_status_name(monitor_->state(w), monitor_->liveness(w), failed_[i]),
                       monitor_->generation(w), now);
}

void Master::show_worker(int worker) {
  if (!board_) return;
  const bool failed = failed_[static_cast<std::size_t>(worker - 1)];
  board_->set_worker_state(worker, monitor_ ? worker_status_name(monitor_->state(worker), monitor_->liveness(worker), failed)
                                            : (failed ? "failed" : "dead"));
}

void Master::take_checkpoint(int worker, const CheckpointMessage& message) {
  for (const std::string& line : message.events) run_->event(line);
  checkpoint_seconds_[message.generation] = std::max(checkpoint_seconds_[message.generation], message.seconds);
  auto& files = checkpoint_files_[message.generation];
  for (const CheckpointFile& f : message.files) files[f.cell] = f;
  log::debug("worker rank {} saved {} cells after generation {}", worker, message.files.size(), message.generation);
  if (static_cast<int>(files.size()) < layout_->records_per_generation()) return;
  CheckpointManifest manifest{message.generation, config_.seed, config_.grid.rows, config_.grid.cols, {}};
  std::uint64_t bytes = 0;
  for (const auto& [cell, f] : files) {
    manifest.cells.push_back(f);
    bytes += f.bytes;
  }
  const std::string folder = checkpoint_folder(config_.output_dir, message.generation);
  write_manifest(folder, manifest);
  checkpoint_files_.erase(message.generation);
  last_checkpoint_ = std::max(last_checkpoint_, message.generation);
  run_->event(fmt::format("checkpoint after generation {} complete: {} files, {:.1f} MB, written in {:.3f} s, {}",
                          message.generation, manifest.cells.size(), static_cast<double>(bytes) / 1e6,
                          checkpoint_seconds_[message.generation], folder));
  checkpoint_seconds_.erase(message.generation);
  for (const std::string& name : prune_checkpoints(config_.output_dir, config_.checkpoint.keep))
    log::debug("deleted the older checkpoint {}", name);
}

void Master::advance_stop(Clock::time_point /*now*/) {
  if (stop_ == Stop::kNone) {
    std::optional<std::string> why;
    {
      std::lock_guard<std::mutex> lock(stop_mutex_);
      why.swap(stop_request_);
    }
    if (!why) return;
    event(fmt::format("stop requested ({}): every worker checkpoints at the end of the current generation", *why));
    paused_at_.assign(paused_at_.size(), std::nullopt);
    for (int w = 1; w <= workers_; ++w)
      if (alive(w)) comms_.world->send(w, kTagPause, Bytes{});
    stop_ = Stop::kPausing;
    return;
  }
  if (stop_ == Stop::kPausing) {
    std::int64_t furthest = 0;
    for (int w = 1; w <= workers_; ++w) {
      const auto& at = paused_at_[static_cast<std::size_t>(w - 1)];
      if (!alive(w)) continue;
      if (!at) return;
      furthest = std::max(furthest, *at);
    }
    // A worker may complete one more generation before it learns the stop
    // (WorkerComm::stop_at), so the stop is one past the furthest.
    stop_at_ = furthest + 1;
    for (int w = 1; w <= workers_; ++w)
      if (alive(w)) comms_.world->send(w, kTagStopAt, encode(GenerationMessage{stop_at_}));
    if (stop_at_ >= config_.training.generations) {
      event("the run is at its last generation: it finishes instead of stopping");
      stop_ = Stop::kNone;
      return;
    }
    log::info("stopping after generation {}: waiting for its checkpoint", stop_at_);
    stop_ = Stop::kStopping;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    if (stop_request_) log::warn("already stopping ({}); SIGKILL ends the run at once", *stop_request_);
    stop_request_.reset();
  }
  if (last_checkpoint_ < stop_at_) return;
  const std::string what = fmt::format(
      "stopped after generation {} with a complete checkpoint: run the same command with --resume auto to continue",
      stop_at_);
  event(what);
  abort_workers(kExitRestart, what);
  throw RestartNeeded(what);
}

void Master::check_liveness(Clock::time_point now) {
  for (const auto& ev : monitor_->check(now)) {
    if (lost_[static_cast<std::size_t>(ev.worker - 1)]) continue;  // lost already
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
  const bool all_results = std::all_of(members_.begin(), members_.end(),
                                       [&](int w) { return results_[static_cast<std::size_t>(w - 1)].has_value(); });
  return !(all_results && run_->generations_written() >= config_.training.generations);
}

void Master::beat_to_workers(Clock::time_point now) {
  for (int w = 1; w <= workers_; ++w)
    if (alive(w)) comms_.world->send(w, kTagMasterHeartbeat, Bytes{});
  last_beat_sent_ = now;
}

RunResult Master::finish() {
  std::vector<ResultMessage> results;
  for (int w : members_) results.push_back(std::move(*results_[static_cast<std::size_t>(w - 1)]));
  std::vector<std::string> kernels;
  for (const auto& k : worker_kernels_) kernels.push_back(k.value_or("unknown"));
  const auto lock = lock_torch_generator();
  RunResult result = layout_->finish(std::move(results), FinishContext{*scorer_, *run_, started_, master_kernels_,
                                                                       kernels, master_device_, worker_devices_});
  record_state("finished", kExitOk);
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

RunResult Master::run() {
  StopSignals signals([this](int number) { request_stop(fmt::format("signal {}", strsignal(number))); });
  try {
    start(Clock::now());
    // Idle back-off (1 ms doubling to 20 ms): the master shares the cores
    // with the workers, and nothing it waits for needs a faster answer.
    IdleBackoff backoff(std::chrono::milliseconds(1), std::chrono::milliseconds(20));
    for (;;) {
      signals.poll();
      if (!run_once(Clock::now())) break;
      backoff.after_round(busy_);
    }
    if (progress_bar_) log::end_status_line();
    board_->set_phase("scoring", "the final ensembles");
    // Scoring can take long: it runs on a thread of its own while this one
    // goes on beating, so the workers waiting for the end do not give up.
    RunResult result;
    std::exception_ptr error;
    std::atomic<bool> finished{false};
    std::thread scoring([&] {
      log::set_thread_name("score");
      log::set_thread_rank(factory_.world_rank());
      try {
        result = finish();
      } catch (...) {
        error = std::current_exception();
      }
      finished = true;
    });
    while (!finished) {
      const auto now = Clock::now();
      while (comms_.world->try_receive()) {
      }
      if (now - last_beat_sent_ >= std::chrono::milliseconds(config_.runtime.heartbeat_interval_ms))
        beat_to_workers(now);
      comms_.world->pending_sends();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    scoring.join();
    if (error) std::rethrow_exception(error);
    board_->set_phase("finished", fmt::format("best: {}", result.best));
    for (int w = 1; w <= workers_; ++w)
      if (alive(w)) comms_.world->send(w, kTagDone, Bytes{});
    if (!flush_sends(*comms_.world, std::chrono::milliseconds(config_.runtime.dead_after_ms)))
      log::warn("the end of the run did not reach every worker within runtime.dead_after_ms");
    return result;
  } catch (const std::exception& e) {
    if (progress_bar_) log::end_status_line();
    if (board_) board_->set_phase("failed", e.what());
    if (workers_started_) abort_workers(exit_code_of(e), e.what());
    try {
      const int code = exit_code_of(e);
      record_state(code == kExitRestart ? "stopped" : "failed", code, e.what());
    } catch (const std::exception& also) {
      log::warn("{}", also.what());
    }
    throw;
  }
}

}  // namespace cellgan
