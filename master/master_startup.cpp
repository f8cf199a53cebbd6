// The order of the master's start-up (see master.h): the input checked
// while the workers are kept waiting, their readiness within a deadline
// (startup_handshake.h), go, then GLOBAL, the run folder and run.json.
#include "master/master.h"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "common/error.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/nn/device.h"
#include "common/nn/run_checks.h"
#include "common/nn/scores.h"
#include "common/nn/torch_generator_lock.h"
#include "master/checkpoint_collector.h"
#include "master/job_status.h"
#include "master/progress_line.h"
#include "master/progress_writer.h"
#include "master/run_directory.h"
#include "master/startup_handshake.h"

namespace cellgan {

StartMessage Master::check_input() {
  config_ = load_config(config_path_, settings_);
  log::set_level(log::parse_level(config_.runtime.log_level));
  torch::set_num_threads(static_cast<int>(config_.runtime.threads));
  if (workers_ < 1)
    throw InputError(fmt::format("{}: workers: the job has 1 rank: expected a master and at least one worker, "
                                 "e.g. mpirun -np 3 cellgan train {}",
                                 config_.source, config_path_));
  layout_ = make_master_layout(config_, workers_);
  add_command_line_faults(config_, command_line_faults_, workers_);
  plan_ = plan_resume(config_, resume_, layout_->records_per_generation());
  board_ = make_job_status_board(config_, objective_name(config_), workers_, layout_->cell_owners(), Clock::now());
  status_ = start_status_server(config_, *board_);  // InputError if its port is taken
  const auto lock = lock_torch_generator();
  const torch::Device device = resolve_device(config_.runtime.device, fmt::format("{}: runtime.device", config_.source));  // InputError: no such GPU
  check_runs_on(config_, device);  // InputError: fp16, nccl or cuda_graphs where they cannot run
  master_device_ = describe_device(device);
  scorer_ = make_scorer(config_, device);  // checks the data and the classifier
  return StartMessage{true, 0, "", to_yaml(config_), config_.source, plan_.generation, plan_.folder};
}

void Master::go_on_without(const std::vector<int>& silent, bool some_ready, std::chrono::milliseconds dead_after) {
  for (int w : silent) {
    membership_.lose(w);
    show_worker(w);
  }
  const std::string what = fmt::format("worker rank {} did not get ready within runtime.dead_after_ms ({} ms)",
                                       fmt::join(silent, ", "), dead_after.count());
  if (factory_.survives_rank_loss() && some_ready) {
    log::warn("{}: going on without it", what);
    pending_events_.push_back(what + ": going on without it");
    for (int w : silent) kill_worker(w);
    return;
  }
  log::error("{}", what);
  abort_workers(kExitFailure, what);
  throw std::runtime_error(what);
}

void Master::start(Clock::time_point now) {
  started_ = now;
  const auto entered = Clock::now();  // `now` may be a test's clock; waits below take real time
  comms_.world = factory_.world();
  results_.assign(static_cast<std::size_t>(std::max(workers_, 0)), std::nullopt);
  worker_kernels_.assign(results_.size(), std::nullopt);
  worker_devices_.assign(results_.size(), "unknown");

  // 1. Validate, then tell the workers either way; wait until they are ready.
  StartupHandshake handshake(*comms_.world, workers_, factory_.world_rank());
  handshake.check_and_tell([this] { return check_input(); });
  workers_started_ = true;
  const auto dead_after = std::chrono::milliseconds(config_.runtime.dead_after_ms);
  const StartupHandshake::Readiness readiness = handshake.wait_until_ready(
      dead_after, std::chrono::milliseconds(config_.runtime.heartbeat_interval_ms),
      [this](int w, const IdentityMessage& id) { membership_.set_identity(w, id); });
  if (readiness.failure) fail_worker(readiness.failure->first, readiness.failure->second);
  if (!readiness.silent.empty()) go_on_without(readiness.silent, !readiness.ready.empty(), dead_after);
  membership_.admit(readiness.ready);
  // The run folder before go: a resumed run deletes the checkpoints taken
  // after its resume point, which a worker told to go could already be
  // writing again. Its files are synced: on a slow disk that takes a
  // while, during which the workers hear the master beat.
  handshake.prepare_and_go(
      [this] {
        lock_ = lock_run_directory(config_);  // InputError: another job writes here
        run_ = std::make_unique<RunDirectory>(config_, layout_->records_per_generation(),
                                              plan_.resuming ? plan_.generation : -1);
      },
      std::chrono::milliseconds(config_.runtime.heartbeat_interval_ms), membership_.members());
  open_run(now, entered);
}

void Master::open_run(Clock::time_point now, Clock::time_point entered) {
  // 2. GLOBAL = the master and every worker; the run directory's records.
  comms_.global = factory_.group(membership_.global_ranks(), kGlobalGroupTag);
  run_->on_event([board = board_.get()](const std::string& line) { board->event(line, Clock::now()); });
  writer_ = std::make_unique<ProgressWriter>(config_, *run_, *board_, layout_->description(), started_,
                                             plan_.generation, stderr_is_terminal());
  board_->set_phase("training");
  for (const std::string& line : plan_.notes) event(line);
  for (const std::string& line : plan_.warnings) {
    log::warn("{}", line);
    run_->event("warning: " + line);
  }
  for (const std::string& line : pending_events_) run_->event(line);
  const std::vector<int>& members = membership_.members();
  if (static_cast<int>(members.size()) < workers_)
    for (const std::string& line : layout_->reassign(members)) run_->event(line);
  checkpoints_ = std::make_unique<CheckpointCollector>(config_.output_dir, config_.seed, config_.grid.rows,
                                                       config_.grid.cols, layout_->records_per_generation(),
                                                       config_.checkpoint.keep, [this] { run_->sync_metrics(); });
  checkpoints_->restart_from(plan_.generation);
  for (const std::string& line : layout_->assignment()) run_->event(line);
  for (const Fault& f : config_.faults) run_->event(fmt::format("fault planned: {} ({})", describe(f), to_text(f)));
  writer_->start(workers_, master_device_, plan_.resuming);
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
