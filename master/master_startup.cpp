// The master's start-up (see master.h): the input checked while the
// workers are kept waiting, their readiness within a deadline, go, then
// GLOBAL, the run folder and run.json.
#include "master/master.h"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "common/checkpoint_store.h"
#include "common/error.h"
#include "common/idle_backoff.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/nn/device.h"
#include "common/nn/scores.h"
#include "common/nn/torch_generator_lock.h"
#include "master/beating_wait.h"
#include "master/checkpoint_collector.h"
#include "master/job_status.h"
#include "master/progress_line.h"
#include "master/run_directory.h"
#include "master/worker_processes.h"

namespace cellgan {

namespace {

// How the run's previous start ended, as its run.json says, and that SLURM
// requeued the job when it did (SLURM_RESTART_COUNT), for events.log.
std::string previous_ending(const RunState& before) {
  std::string line =
      before.status == "running"
          ? std::string("the previous start ended without its master recording why (the master was killed, or "
                        "SLURM requeued or preempted the job, or a node failed)")
          : fmt::format("the previous start ended {}{}", before.status, before.message.empty() ? "" : ": " + before.message);
  const char* restarts = std::getenv("SLURM_RESTART_COUNT");
  const char* job = std::getenv("SLURM_JOB_ID");
  if (restarts && job && std::atoi(restarts) > 0)
    line += fmt::format("; SLURM requeued job {} (restart {}): resuming", job, restarts);
  return line;
}

}  // namespace
namespace {

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

void Master::validate() {
  // The workers wait for the start message with the default deadline; the
  // heartbeats tell them the master is alive while it reads its inputs.
  run_while_beating(
      [this] {
        config_ = load_config(config_path_, settings_);
        log::set_level(log::parse_level(config_.runtime.log_level));
        torch::set_num_threads(static_cast<int>(config_.runtime.threads));
        if (workers_ < 1)
          throw InputError(fmt::format("{}: workers: the job has 1 rank: expected a master and at least one worker, "
                                       "e.g. mpirun -np 3 cellgan train {}",
                                       config_.source, config_.source));
        layout_ = make_master_layout(config_, workers_);
        add_faults(config_, command_line_faults_, workers_);
        plan_ = plan_resume(config_, resume_, layout_->records_per_generation());
        board_ = make_job_status_board(config_, objective_name(config_), workers_, layout_->cell_owners(),
                                       Clock::now());
        status_ = start_status_server(config_, *board_);  // InputError if its port is taken
        const auto lock = lock_torch_generator();
        const torch::Device device = resolve_device(config_.runtime.device);  // InputError: no such GPU
        master_device_ = describe_device(device);
        scorer_ = make_scorer(config_, device);  // checks the data and the classifier
      },
      std::chrono::milliseconds(RuntimeConfig{}.heartbeat_interval_ms),
      [this] {
        for (int w = 1; w <= workers_; ++w) comms_.world->send(w, kTagMasterHeartbeat, Bytes{});
      },
      [this] { comms_.world->pending_sends(); }, "check", factory_.world_rank());
}

void Master::wait_until_ready() {
  const auto dead_after = std::chrono::milliseconds(config_.runtime.dead_after_ms);
  const auto deadline = Clock::now() + dead_after;
  std::vector<bool> ready(static_cast<std::size_t>(workers_), false);
  std::size_t count = 0;
  IdleBackoff backoff(std::chrono::microseconds(200), std::chrono::milliseconds(5));
  BeatTimer beat(std::chrono::milliseconds(config_.runtime.heartbeat_interval_ms), false);
  while (count < ready.size()) {
    if (beat.due()) {  // the ready workers wait for go with a deadline
      for (int w = 1; w <= workers_; ++w)
        if (ready[static_cast<std::size_t>(w - 1)]) comms_.world->send(w, kTagMasterHeartbeat, Bytes{});
      comms_.world->pending_sends();
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
    if (msg->tag == kTagFailure) fail_worker(msg->source, decode_failure(msg->payload));
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

void Master::start_run_state() {
  run_state_ = RunState{};
  run_state_.layout = to_string(config_.layout);
  run_state_.exchange = config_.grid.exchange == ExchangeMode::kAsync ? "async" : "sync";
  run_state_.rows = static_cast<int>(config_.grid.rows);
  run_state_.cols = static_cast<int>(config_.grid.cols);
  run_state_.workers = workers_;
  run_state_.device = master_device_;
  run_state_.seed = config_.seed;
  run_state_.generations = config_.training.generations;
  run_state_.objective = objective_name(config_);
  if (plan_.resuming) {
    try {
      if (const auto before = read_run_state(config_.output_dir)) {
        event(previous_ending(*before));
        run_state_.stretches = before->stretches + 1;
        run_state_.seconds = before->seconds;
        run_state_.spans = before->spans;
      }
    } catch (const std::runtime_error& e) {
      log::warn("{}; counting this start as the run's first", e.what());
    }
  }
  earlier_seconds_ = run_state_.seconds;
  const double unix_now = unix_seconds();
  run_state_.spans.emplace_back(unix_now, unix_now);
  record_state("running");
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
  lock_ = lock_run_directory(config_);  // InputError: another job writes here
  run_ = std::make_unique<RunDirectory>(config_, layout_->records_per_generation(),
                                        plan_.resuming ? plan_.generation : -1);
  run_->on_event([board = board_.get()](const std::string& line) { board->event(line, Clock::now()); });
  board_->set_phase("training");
  progress_bar_ = stderr_is_terminal();
  for (const std::string& line : plan_.notes) event(line);
  for (const std::string& line : pending_events_) run_->event(line);
  if (static_cast<int>(members_.size()) < workers_)
    for (const std::string& line : layout_->reassign(members_)) run_->event(line);
  checkpoints_ = std::make_unique<CheckpointCollector>(config_.output_dir, config_.seed, config_.grid.rows,
                                                       config_.grid.cols, layout_->records_per_generation(),
                                                       config_.checkpoint.keep, [this] { run_->sync_metrics(); });
  checkpoints_->restart_from(plan_.generation);
  for (const std::string& line : layout_->assignment()) run_->event(line);
  for (const Fault& f : config_.faults) run_->event(fmt::format("fault planned: {} ({})", describe(f), to_text(f)));
  start_run_state();
  master_kernels_ = blas_kernels();
  log::info("run {}: {}x{} grid, {} worker{}, {} generations, writing {}; master on {} kernels", config_.source,
            config_.grid.rows, config_.grid.cols, workers_, workers_ == 1 ? "" : "s", config_.training.generations,
            config_.output_dir, master_kernels_);
  log::info("master: device {} ({} GPU{} visible)", master_device_, visible_gpus(), visible_gpus() == 1 ? "" : "s");
  if (config_.grid.exchange == ExchangeMode::kAsync && workers_ > 1)
    event("grid.exchange async: each cell trains with the newest neighbours received, so this run's result depends "
          "on the workers' timing and is not repeatable");
  // The workers waited for go without beating: their silence counts from
  // now, not from when start() began, which may be a whole dead_after
  // earlier when the master waited out a worker that never got ready.
  monitor_ = std::make_unique<HeartbeatMonitor>(workers_, std::chrono::milliseconds(config_.runtime.late_after_ms),
                                                std::chrono::milliseconds(config_.runtime.dead_after_ms),
                                                now + (Clock::now() - entered));
}

}  // namespace cellgan
