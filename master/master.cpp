// The master rank (see master.h).
#include "master/master.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "common/error.h"
#include "common/idle_backoff.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/nn/scores.h"
#include "common/nn/torch_generator_lock.h"
#include "master/run_directory.h"
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
}

int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const InputError*>(&e)) return kExitBadInput;
  if (dynamic_cast<const std::logic_error*>(&e)) return kExitInternal;
  return kExitFailure;
}

}  // namespace

Master::Master(JobCommsFactory& factory, std::string config_path, std::vector<Fault> command_line_faults)
    : factory_(factory),
      config_path_(std::move(config_path)),
      command_line_faults_(std::move(command_line_faults)),
      workers_(factory.world_size() - 1) {}

Master::~Master() = default;

bool Master::alive(int worker) const {
  const std::size_t i = static_cast<std::size_t>(worker - 1);
  return workers_started_ && !failed_[i] && !lost_[i] &&
         (!monitor_ || monitor_->liveness(worker) != HeartbeatMonitor::Liveness::kDead);
}

void Master::fail_worker(int worker, const std::string& reason) {
  failed_[static_cast<std::size_t>(worker - 1)] = true;
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
  while (count < ready.size()) {
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
        }
      worker_lost_ = true;
      const std::string what = fmt::format("worker rank {} did not get ready within runtime.dead_after_ms ({} ms)",
                                           fmt::join(silent, ", "), dead_after.count());
      log::error("{}", what);
      abort_workers(kExitFailure, what);
      throw std::runtime_error(what);
    }
    backoff.after_round(true);
    const std::size_t i = static_cast<std::size_t>(msg->source - 1);
    if (msg->tag == kTagFailure) fail_worker(msg->source, decode_failure(msg->payload).reason);
    if (msg->tag != kTagReady)
      throw std::logic_error(fmt::format("start-up: tag {} from worker rank {} before it was ready", msg->tag,
                                         msg->source));
    if (!ready[i]) ++count;
    ready[i] = true;
  }
  for (int w = 1; w <= workers_; ++w) comms_.world->send(w, kTagGo, Bytes{});
}

void Master::start(Clock::time_point now) {
  started_ = now;
  comms_.world = factory_.world();
  results_.assign(static_cast<std::size_t>(std::max(workers_, 0)), std::nullopt);
  worker_kernels_.assign(results_.size(), std::nullopt);
  failed_.assign(results_.size(), false);
  lost_.assign(results_.size(), false);

  // 1. Validate, then tell the workers either way.
  try {
    config_ = load_config(config_path_);
    log::set_level(log::parse_level(config_.runtime.log_level));
    torch::set_num_threads(static_cast<int>(config_.runtime.threads));
    if (workers_ < 1)
      throw InputError(fmt::format("{}: workers: the job has 1 rank: expected a master and at least one worker, "
                                   "e.g. mpirun -np 3 cellgan train {}",
                                   config_.source, config_.source));
    layout_ = make_master_layout(config_, workers_);
    add_faults(config_, command_line_faults_, workers_);
    check_run_directory(config_);
    const auto lock = lock_torch_generator();
    scorer_ = make_scorer(config_);  // checks the data and the classifier
  } catch (const std::exception& e) {
    const Bytes no = encode(StartMessage{false, exit_code_of(e), e.what(), "", ""});
    for (int w = 1; w <= workers_; ++w) comms_.world->send(w, kTagStart, no);
    flush_sends(*comms_.world, start_timeout());
    throw;
  }
  const Bytes yes = encode(StartMessage{true, 0, "", to_yaml(config_), config_.source});
  for (int w = 1; w <= workers_; ++w) comms_.world->send(w, kTagStart, yes);
  workers_started_ = true;
  wait_until_ready();

  // 2. GLOBAL = the master and every worker; the run directory.
  comms_.global = factory_.group(global_ranks(workers_), kGlobalGroupTag);
  run_ = std::make_unique<RunDirectory>(config_, layout_->records_per_generation());
  for (const std::string& line : layout_->assignment()) run_->event(line);
  for (const Fault& f : config_.faults) run_->event(fmt::format("fault planned: {} ({})", describe(f), to_text(f)));
  master_kernels_ = blas_kernels();
  log::info("run {}: {}x{} grid, {} worker{}, {} generations, writing {}; master on {} kernels", config_.source,
            config_.grid.rows, config_.grid.cols, workers_, workers_ == 1 ? "" : "s", config_.training.generations,
            config_.output_dir, master_kernels_);
  monitor_ = std::make_unique<HeartbeatMonitor>(workers_, std::chrono::milliseconds(config_.runtime.late_after_ms),
                                                std::chrono::milliseconds(config_.runtime.dead_after_ms), now);
}

void Master::write_progress(std::int64_t generation, Clock::time_point now) {
  const std::string objective = objective_name(config_);
  const BestCell best = best_cell(run_->generation_records(generation), objective);
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  const std::int64_t total = config_.training.generations;
  const double eta = elapsed / static_cast<double>(generation) * static_cast<double>(total - generation);
  log::info("generation {}/{}: best mixture {} {:.4f} (cell {}), {:.1f} s elapsed, ~{:.0f} s left", generation, total,
            objective, best.score, best.cell, elapsed, eta);
  // previews/gen-NNNNNN.png: the samples the generation's best cell sent.
  auto previews = run_->take_previews(generation);
  const auto it = previews.find(best.cell);
  if (it == previews.end()) return;
  const std::string path = run_->path(fmt::format("previews/gen-{:06d}.png", generation));
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_samples_png(config_, path, it->second);
  log::debug("preview of generation {} (cell {}): {}", generation, best.cell, path);
}

void Master::take(const Message& message, bool from_global, Clock::time_point now) {
  const int w = message.source;  // world rank; GLOBAL ranks are the same
  const std::size_t i = static_cast<std::size_t>(w - 1);
  if (w < 1 || w > workers_) throw std::logic_error(fmt::format("message from rank {}, not a worker", w));
  if (from_global && message.tag == kTagHello) {
    worker_kernels_[i] = decode_hello(message.payload).blas_kernels;
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
    for (std::int64_t g : run_->add_records(records.generation, std::move(records.records))) write_progress(g, now);
  } else if (!from_global && message.tag == kTagFailure) {
    fail_worker(w, decode_failure(message.payload).reason);
  } else {
    log::warn("ignoring a message with tag {} from rank {} on {}", message.tag, w, from_global ? "GLOBAL" : "WORLD");
  }
}

void Master::check_liveness(Clock::time_point now) {
  for (const auto& ev : monitor_->check(now)) {
    const std::string line =
        fmt::format("worker rank {} {}: silent for {:.1f} s", ev.worker, to_string(ev.kind), ev.silent_seconds);
    run_->event(line);
    if (ev.kind != HeartbeatMonitor::Event::Kind::kDead) {
      log::warn("{}", line);
      continue;
    }
    log::error("{} (runtime.dead_after_ms {}); ending the run", line, config_.runtime.dead_after_ms);
    worker_lost_ = true;
    const std::string what = fmt::format("worker rank {} is dead: silent for {:.1f} s", ev.worker, ev.silent_seconds);
    abort_workers(kExitFailure, what);
    throw std::runtime_error(what);
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
  comms_.world->pending_sends();
  check_liveness(now);
  const bool all_results = std::all_of(results_.begin(), results_.end(), [](const auto& r) { return r.has_value(); });
  return !(all_results && run_->generations_written() >= config_.training.generations);
}

void Master::beat_to_workers(Clock::time_point now) {
  for (int w = 1; w <= workers_; ++w)
    if (alive(w)) comms_.world->send(w, kTagMasterHeartbeat, Bytes{});
  last_beat_sent_ = now;
}

RunResult Master::finish() {
  std::vector<ResultMessage> results;
  for (auto& r : results_) results.push_back(std::move(*r));
  std::vector<std::string> kernels;
  for (const auto& k : worker_kernels_) kernels.push_back(k.value_or("unknown"));
  const auto lock = lock_torch_generator();
  return layout_->finish(std::move(results), FinishContext{*scorer_, *run_, started_, master_kernels_, kernels});
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
  try {
    start(Clock::now());
    // Idle back-off (1 ms doubling to 20 ms): the master shares the cores
    // with the workers, and nothing it waits for needs a faster answer.
    IdleBackoff backoff(std::chrono::milliseconds(1), std::chrono::milliseconds(20));
    while (run_once(Clock::now())) backoff.after_round(busy_);
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
    for (int w = 1; w <= workers_; ++w)
      if (alive(w)) comms_.world->send(w, kTagDone, Bytes{});
    if (!flush_sends(*comms_.world, std::chrono::milliseconds(config_.runtime.dead_after_ms)))
      log::warn("the end of the run did not reach every worker within runtime.dead_after_ms");
    return result;
  } catch (const std::exception& e) {
    if (workers_started_) abort_workers(exit_code_of(e), e.what());
    throw;
  }
}

}  // namespace cellgan
