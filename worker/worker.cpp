// A worker rank (see worker.h).
#include "worker/worker.h"

#include <torch/torch.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "common/comm/protocol.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/process_stats.h"
#include "worker/fault_injector.h"
#include "worker/worker_comm.h"
#include "worker/worker_layout.h"

namespace cellgan {
namespace {

int exit_code_of(const std::exception& e) {
  return dynamic_cast<const std::logic_error*>(&e) ? kExitInternal : kExitFailure;
}

}  // namespace

Worker::Worker(JobCommsFactory& factory) : factory_(factory) {}

int Worker::run() {
  const int rank = factory_.world_rank();
  const int workers = factory_.world_size() - 1;
  JobComms comms;
  comms.world = factory_.world();

  // 1. Start-up: the master's verdict on the configuration.
  StartMessage start;
  try {
    start = decode_start(receive_blocking(*comms.world, kMasterRank, kTagStart, start_timeout()).payload);
  } catch (const DeadlineExceeded& e) {
    log::error("worker rank {}: no start message from the master: {}", rank, e.what());
    master_lost_ = true;
    return kExitFailure;
  }
  if (!start.ok) return start.exit_code;  // the master has printed the reason

  // 2. What needs no communicator, then ready; go, or the master's abort.
  Config config;
  std::unique_ptr<WorkerLayout> layout;
  try {
    config = parse_config(start.config_yaml, start.config_source);
    log::set_level(log::parse_level(config.runtime.log_level));
    torch::set_num_threads(static_cast<int>(config.runtime.threads));
    layout = make_worker_layout(config, workers);
    if (hooks_.throw_at_start) throw std::runtime_error("test fault at start-up");
  } catch (const std::exception& e) {
    log::error("worker rank {}: {}", rank, e.what());
    comms.world->send(kMasterRank, kTagFailure, encode(FailureMessage{fmt::format("start-up: {}", e.what())}));
    flush_sends(*comms.world, start_timeout());
    return exit_code_of(e);
  }
  const auto dead_after = std::chrono::milliseconds(config.runtime.dead_after_ms);
  comms.world->send(kMasterRank, kTagReady, Bytes{});
  try {
    const Message go = receive_blocking(*comms.world, kMasterRank, kAnyTag, dead_after);
    if (go.tag == kTagAbort) {
      const AbortMessage abort = decode_abort(go.payload);
      log::error("worker rank {}: run ended by the master: {}", rank, abort.reason);
      return abort.exit_code;
    }
    if (go.tag != kTagGo)
      throw std::logic_error(fmt::format("expected go or abort from the master, got tag {}", go.tag));
  } catch (const DeadlineExceeded& e) {
    log::error("worker rank {}: no go from the master: {}", rank, e.what());
    master_lost_ = true;
    return kExitFailure;
  }

  // 3. Communicators (every member has just shown it is alive), then hello.
  comms.global = factory_.group(global_ranks(workers), kGlobalGroupTag);
  comms.local =
      factory_.cartesian(worker_ranks(workers), layout->worker_rows(), layout->worker_cols(), kLocalGroupTag);
  const int me = comms.local->rank();
  const std::string kernels = blas_kernels();
  comms.global->send(kMasterRank, kTagHello, encode(HelloMessage{kernels}));

  // 4. The communication thread takes the communicators; this thread trains.
  WorkerComm comm(std::move(comms), std::chrono::milliseconds(config.runtime.heartbeat_interval_ms), dead_after);
  comm.set_progress(WorkerState::kProcessing, 0);
  std::thread comm_thread([&comm] { comm.run(); });
  log::set_thread_name("train");

  int exit_code = kExitOk;
  std::int64_t done = 0;
  const FaultInjector faults(FaultPlan(config.faults), rank);
  layout->set_faults(&faults);
  try {
    const std::string share = layout->start(me);
    log::info("worker {} of {}: {}, {} kernels", me + 1, workers, share, kernels);
    for (std::int64_t g = 0; g < config.training.generations; ++g) {
      if (const auto abort = comm.aborted()) throw JobAborted(abort->exit_code, abort->reason);
      std::vector<std::string> events = faults.at_generation_start(g + 1, [&comm] { comm.go_silent(); });
      if (g == hooks_.throw_at) throw std::runtime_error(fmt::format("test fault in generation {}", g + 1));
      RecordsMessage message;
      message.generation = g + 1;
      message.records = layout->run_generation(g, comm);
      for (const GenerationRecord& r : message.records)
        for (const std::string& line : r.events) log::warn("{}", line);
      if (!message.records.empty())  // the worker's own events go with its first cell's
        message.records.front().events.insert(message.records.front().events.begin(), events.begin(), events.end());
      comm.report(message);
      comm.set_progress(WorkerState::kProcessing, g + 1);
      done = g + 1;
    }
    comm.send_result(layout->results());
    comm.set_progress(WorkerState::kFinished, done);
    comm.wait_for_done();  // beating, until the master has written the result
  } catch (const JobAborted& e) {
    log::error("worker rank {}: run ended: {}", rank, e.what());
    exit_code = e.exit_code();
  } catch (const std::exception& e) {
    log::error("worker rank {}: {}", rank, e.what());
    comm.send_failure(fmt::format("generation {}: {}", done + 1, e.what()));
    exit_code = exit_code_of(e);
  }
  comm.finish();
  comm_thread.join();
  master_lost_ = comm.master_lost();
  log::info("worker {} done: peak RSS {:.1f} MB", me + 1, static_cast<double>(peak_rss_bytes()) / 1e6);
  return exit_code;
}

}  // namespace cellgan
