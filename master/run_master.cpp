// The master rank (see run_master.h).
#include "master/run_master.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/comm/protocol.h"
#include "common/error.h"
#include "common/idle_backoff.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "grid/partition.h"
#include "master/final_ensemble.h"
#include "master/heartbeat_monitor.h"
#include "master/run_directory.h"
#include "master/sample_png.h"

namespace cellgan {
namespace {

using Clock = std::chrono::steady_clock;

// Validates everything a run needs before any work or output. Throws
// InputError with the one line the user sees.
std::unique_ptr<SampleScorer> validate(const Config& config, int workers) {
  if (workers < 1)
    throw InputError(fmt::format("{}: workers: the job has 1 rank: expected a master and at least one worker, "
                                 "e.g. mpirun -np 3 cellgan train {}",
                                 config.source, config.source));
  const GridShape grid(static_cast<int>(config.grid.rows), static_cast<int>(config.grid.cols));
  if (workers > grid.cell_count())
    throw InputError(fmt::format("{}: workers: {} worker ranks do not fit a {}x{} grid: expected 1..{} (mpirun -np "
                                 "2..{})",
                                 config.source, workers, grid.rows(), grid.cols(), grid.cell_count(),
                                 grid.cell_count() + 1));
  check_run_directory(config);
  return make_scorer(config);  // checks the data and the classifier
}

void tell_workers(Communicator& world, const StartMessage& message) {
  const Bytes payload = encode(message);
  for (int r = 1; r < world.size(); ++r) world.send(r, kTagStart, payload);
  flush_sends(world);
}

struct BestCell {
  int cell = -1;
  double score = INFINITY;
};

// The cell whose mixture scored lowest under `objective` in a generation.
BestCell best_cell(const std::map<int, std::string>& lines, const std::string& objective) {
  BestCell best;
  for (const auto& [cell, line] : lines) {
    const auto j = nlohmann::json::parse(line);
    const auto& score = j.at("scores").at(objective);
    if (score.is_number() && score.get<double>() < best.score) best = {cell, score.get<double>()};
  }
  return best;
}

std::string progress_line(std::int64_t generation, std::int64_t total, const BestCell& best,
                          const std::string& objective, double elapsed) {
  const double eta = elapsed / static_cast<double>(generation) * static_cast<double>(total - generation);
  return fmt::format("generation {}/{}: best mixture {} {:.4f} (cell {}), {:.1f} s elapsed, ~{:.0f} s left",
                     generation, total, objective, best.score, best.cell, elapsed, eta);
}

// previews/gen-NNNNNN.png: the samples the generation's best cell sent.
void write_preview(const Config& config, RunDirectory& run, std::int64_t generation, const BestCell& best) {
  auto previews = run.take_previews(generation);
  const auto it = previews.find(best.cell);
  if (it == previews.end()) return;
  const std::string path = run.path(fmt::format("previews/gen-{:06d}.png", generation));
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_samples_png(config, path, it->second);
  log::debug("preview of generation {} (cell {}): {}", generation, best.cell, path);
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

}  // namespace

RunResult run_master(MpiSession& session, const std::string& config_path) {
  const auto started = Clock::now();
  std::unique_ptr<Communicator> world = session.world();
  const int workers = session.world_size() - 1;

  // 1. Validate, then tell the workers either way.
  Config config;
  std::unique_ptr<SampleScorer> scorer;
  try {
    config = load_config(config_path);
    log::set_level(log::parse_level(config.runtime.log_level));
    torch::set_num_threads(static_cast<int>(config.runtime.threads));
    scorer = validate(config, workers);
  } catch (const InputError& e) {
    tell_workers(*world, StartMessage{false, e.what(), "", ""});
    throw;
  }
  tell_workers(*world, StartMessage{true, "", to_yaml(config), config.source});
  const std::string objective = objective_name(config);  // "fid" or "mode_tvd"

  // 2. GLOBAL = the master and every worker (all are active here).
  std::vector<int> all;
  for (int r = 0; r <= workers; ++r) all.push_back(r);
  std::unique_ptr<Communicator> global = session.create_group(all, kGlobalGroupTag);
  const std::vector<Bytes> kernel_names = global->gather(0, Bytes{});  // [0] is the master's (empty)
  const std::string master_kernels = blas_kernels();
  std::vector<std::string> worker_kernels;
  for (std::size_t r = 1; r < kernel_names.size(); ++r)
    worker_kernels.emplace_back(kernel_names[r].begin(), kernel_names[r].end());

  const GridShape grid(static_cast<int>(config.grid.rows), static_cast<int>(config.grid.cols));
  const Partition partition = partition_cells(grid, workers);
  RunDirectory run(config, grid.cell_count());
  run.event(fmt::format("start: {} workers, grid {}x{}, worker grid {}x{} of {}", workers, grid.rows(), grid.cols(),
                        partition.worker_rows, partition.worker_cols, partition.blocks ? "blocks" : "strips"));
  for (int w = 0; w < workers; ++w)
    run.event(fmt::format("assign: worker rank {} <- cells {}", w + 1, fmt::join(partition.cells_of[w], ",")));
  log::info("run {}: {}x{} grid, {} worker{}, {} generations, writing {}; master on {} kernels", config.source,
            grid.rows(), grid.cols(), workers, workers == 1 ? "" : "s", config.training.generations,
            config.output_dir, master_kernels);
  warn_if_kernels_differ(worker_kernels, run);

  // 3. Control loop: heartbeats, records, liveness.
  HeartbeatMonitor monitor(workers, std::chrono::milliseconds(config.runtime.late_after_ms),
                           std::chrono::milliseconds(config.runtime.dead_after_ms), Clock::now());
  const std::int64_t total = config.training.generations;
  // Idle back-off (1 ms doubling to 20 ms): the master shares the cores
  // with the workers, and nothing it waits for needs a faster answer.
  IdleBackoff backoff(std::chrono::milliseconds(1), std::chrono::milliseconds(20));
  while (run.generations_written() < total) {
    bool did = false;
    while (auto msg = world->try_receive()) {
      did = true;
      if (msg->tag == kTagHeartbeat) {
        const HeartbeatMessage hb = decode_heartbeat(msg->payload);
        monitor.beat(msg->source, hb.state, hb.generation, Clock::now());
      } else if (msg->tag == kTagRecords) {
        RecordsMessage rec = decode_records(msg->payload);
        monitor.beat(msg->source, WorkerState::kProcessing, rec.generation, Clock::now());
        for (std::int64_t g : run.add_records(rec.generation, rec.json_lines, std::move(rec.previews))) {
          const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
          const BestCell best = best_cell(run.generation_lines(g), objective);
          log::info("{}", progress_line(g, total, best, objective, elapsed));
          write_preview(config, run, g, best);
        }
      }
    }
    for (const auto& ev : monitor.check(Clock::now())) {
      const std::string line = fmt::format("worker rank {} {}: silent for {:.1f} s", ev.worker,
                                           to_string(ev.kind), ev.silent_seconds);
      run.event(line);
      if (ev.kind == HeartbeatMonitor::Event::Kind::kDead) {
        log::error("{}; ending the run (policy: abort)", line);
        session.abort(kExitFailure);
      }
      log::warn("{}", line);
    }
    if (const int failed = monitor.failed_worker()) {
      run.event(fmt::format("worker rank {} failed; ending the run", failed));
      log::error("worker rank {} reported a failure (see its log line above); ending the run", failed);
      session.abort(kExitFailure);
    }
    backoff.after_round(did);
  }

  // 4. Gather every cell's ensemble over GLOBAL.
  const std::vector<Bytes> payloads = global->gather(0, Bytes{});
  std::vector<Ensemble> ensembles;
  for (int r = 1; r < static_cast<int>(payloads.size()); ++r) {
    ResultMessage result = decode_result(payloads[r]);
    for (std::size_t i = 0; i < result.cells.size(); ++i)
      ensembles.push_back(Ensemble::decode(result.ensembles[i], fmt::format("result of worker rank {}", r)));
  }
  std::sort(ensembles.begin(), ensembles.end(), [](const Ensemble& a, const Ensemble& b) { return a.cell < b.cell; });
  run.event(fmt::format("gathered {} ensembles", ensembles.size()));
  if (config.evaluation.grid_ensemble && ensembles.size() > 1)
    ensembles.push_back(grid_ensemble(ensembles, config.training.population_size));

  // 5. Score, choose, write.
  const std::vector<CellResult> results = score_ensembles(config, ensembles, *scorer);
  const std::size_t best = best_result(results, objective);
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  write_result_files(config, config.output_dir, ensembles[best], results, best, seconds,
                     master_kernels, worker_kernels);
  run.event(fmt::format("finished: best ensemble {}", ensemble_label(results[best].cell)));

  // 6. Drain the workers' last heartbeats (bounded), so they end cleanly.
  const auto drain_until = Clock::now() + std::chrono::seconds(10);
  while (!monitor.all_finished() && Clock::now() < drain_until) {
    if (auto msg = world->try_receive(kAnySource, kTagHeartbeat)) {
      const HeartbeatMessage hb = decode_heartbeat(msg->payload);
      monitor.beat(msg->source, hb.state, hb.generation, Clock::now());
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  while (world->try_receive()) {
  }

  RunResult out;
  out.output_dir = config.output_dir;
  out.best = ensemble_label(results[best].cell);
  out.best_generators = ensembles[best].generators.size();
  out.scores = results[best].scores;
  out.seconds = seconds;
  return out;
}

}  // namespace cellgan
