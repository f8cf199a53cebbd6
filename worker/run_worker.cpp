// A worker rank (see run_worker.h).
#include "worker/run_worker.h"

#include <torch/torch.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/process_stats.h"
#include "common/nn/training_data.h"
#include "worker/cell_block.h"
#include "worker/worker_comm.h"

namespace cellgan {
namespace {

void log_memory(const char* when) {
  if (!log::enabled(log::Level::kDebug)) return;  // reading /proc and the heap's books is not free
  const ResidentSet rss = current_rss();
  log::debug("memory {}: anonymous {:.1f} MB (heap in use {:.1f} MB), files {:.1f} MB, shared {:.1f} MB",
             when, static_cast<double>(rss.anonymous) / 1e6, static_cast<double>(rss.heap_in_use) / 1e6,
             static_cast<double>(rss.file) / 1e6, static_cast<double>(rss.shared) / 1e6);
}

}  // namespace

int run_worker(MpiSession& session) {
  const int rank = session.world_rank();
  const int workers = session.world_size() - 1;
  std::unique_ptr<Communicator> world = session.world();

  // 1. Start-up: the master's verdict on the configuration.
  const StartMessage start = decode_start(receive_blocking(*world, 0, kTagStart).payload);
  if (!start.ok) return kExitBadInput;  // the master has printed the reason
  const Config config = parse_config(start.config_yaml, start.config_source);
  log::set_level(log::parse_level(config.runtime.log_level));
  torch::set_num_threads(static_cast<int>(config.runtime.threads));
  log_memory("at start");

  // 2. Communicators.
  const GridShape grid(static_cast<int>(config.grid.rows), static_cast<int>(config.grid.cols));
  const Partition partition = partition_cells(grid, workers);
  std::vector<int> all, worker_ranks;
  for (int r = 0; r <= workers; ++r) all.push_back(r);
  for (int r = 1; r <= workers; ++r) worker_ranks.push_back(r);
  std::unique_ptr<Communicator> global = session.create_group(all, kGlobalGroupTag);
  const std::string kernels = blas_kernels();
  global->gather(0, Bytes(kernels.begin(), kernels.end()));  // the master checks that all workers agree
  std::unique_ptr<Communicator> local =
      session.create_cartesian(worker_ranks, partition.worker_rows, partition.worker_cols, kLocalGroupTag);
  const int me = local->rank();
  const HaloPlan plan = halo_plan(grid, partition, config.grid.neighbourhood, me);

  // 3. Data, scorer and cells; then the communication thread takes MPI.
  const TrainingData data(config);
  log_memory("with the training data");
  std::unique_ptr<SampleScorer> scorer = make_scorer(config);
  log_memory("with the scorer");
  CellBlock block(config, grid, partition.cells_of[me], data, *scorer);
  log_memory("with the cells");
  log::info("worker {} of {}: cells {} ({} to send, {} to receive per generation), {} kernels", me + 1, workers,
            fmt::format("{}", fmt::join(block.cells(), ",")), plan.sends.size(), plan.receives.size(),
            kernels);
  std::vector<int> sent_cells;  // this worker's cells that other workers need
  for (const auto& out : plan.sends) sent_cells.push_back(out.cell);
  WorkerComm comm(std::move(world), std::move(global), std::move(local), plan,
                  std::chrono::milliseconds(config.runtime.heartbeat_interval_ms));
  comm.set_progress(WorkerState::kProcessing, 0);
  std::thread comm_thread([&comm] { comm.run(); });
  log::set_thread_name("train");

  int exit_code = kExitOk;
  try {
    for (std::int64_t g = 0; g < config.training.generations; ++g) {
      comm.publish_centres(g, block.centres(sent_cells));
      const auto t_wait = std::chrono::steady_clock::now();
      const auto halos = comm.wait_for_halos(g);
      const double idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_wait).count();
      auto records = block.run_generation(halos);
      RecordsMessage message;
      message.generation = g + 1;
      message.cells = static_cast<std::int32_t>(records.size());
      for (auto& r : records) {
        r.seconds["idle"] = idle / static_cast<double>(records.size());
        message.json_lines += to_json_line(r);
        if (!r.preview.empty()) message.previews[r.cell] = std::move(r.preview);
      }
      comm.report(std::move(message));
      comm.set_progress(WorkerState::kProcessing, g + 1);
      log_memory(fmt::format("after generation {}", g + 1).c_str());
    }
    comm.gather_results(block.encoded_results());
    comm.set_progress(WorkerState::kFinished, config.training.generations);
  } catch (const std::exception& e) {
    log::error("worker {}: {}", rank, e.what());
    comm.set_progress(WorkerState::kFailed, block.generation());
    exit_code = kExitFailure;
  }
  comm.finish();
  comm_thread.join();
  log::info("worker {} done: peak RSS {:.1f} MB", me + 1, static_cast<double>(peak_rss_bytes()) / 1e6);
  return exit_code;
}

}  // namespace cellgan
