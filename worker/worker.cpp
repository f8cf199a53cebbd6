// A worker rank (see worker.h).
#include "worker/worker.h"

#include <torch/torch.h>

#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/comm/protocol.h"
#include "common/checkpoint_store.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/nn/device.h"
#include "common/process_stats.h"
#include "worker/fault_injector.h"
#include "worker/worker_comm.h"
#include "worker/worker_layout.h"

namespace cellgan {

Worker::Worker(JobCommsFactory& factory) : factory_(factory) {}

int Worker::run() {
  const int rank = factory_.world_rank();
  const int workers = factory_.world_size() - 1;
  JobComms comms;
  comms.world = factory_.world();

  // 0. Who this worker is: the master kills a hung worker on its host by PID.
  comms.world->send(kMasterRank, kTagIdentity,
                    encode(IdentityMessage{static_cast<std::int64_t>(::getpid()), host_name()}));

  // 1. Start-up: the master's verdict on the configuration. Its heartbeats
  // while it reads its inputs keep the wait going.
  StartMessage start;
  try {
    for (;;) {
      const Message m = receive_blocking(*comms.world, kMasterRank, kAnyTag, start_timeout());
      if (m.tag == kTagMasterHeartbeat) continue;
      if (m.tag != kTagStart)
        throw std::logic_error(fmt::format("expected the start message from the master, got tag {}", m.tag));
      start = decode_start(m.payload);
      break;
    }
  } catch (const DeadlineExceeded& e) {
    log::error("worker rank {}: no start message from the master: {}", rank, e.what());
    master_lost_ = true;
    return kExitFailure;
  }
  if (!start.ok) return start.exit_code;  // the master has printed the reason
  if (hooks_.vanish_at_start) return kExitFailure;

  // 2. What needs no communicator, then ready; go, or the master's abort.
  Config config;
  std::string device;  // where this worker computes (runtime.device)
  std::unique_ptr<WorkerLayout> layout;
  ResumeFrom from;
  try {
    config = parse_config(start.config_yaml, start.config_source);
    if (start.resume_generation > 0)
      from = ResumeFrom{start.resume_generation, start.resume_folder, read_manifest(start.resume_folder)};
    log::set_level(log::parse_level(config.runtime.log_level));
    torch::set_num_threads(static_cast<int>(config.runtime.threads));
    device = describe_device(resolve_device(config.runtime.device));
    log::info("worker rank {}: device {}", rank, device);
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
  MembersMessage members;
  try {
    Message go = receive_blocking(*comms.world, kMasterRank, kAnyTag, dead_after);
    while (go.tag == kTagMasterHeartbeat) go = receive_blocking(*comms.world, kMasterRank, kAnyTag, dead_after);
    if (go.tag == kTagAbort) {
      const AbortMessage abort = decode_abort(go.payload);
      log::error("worker rank {}: run ended by the master: {}", rank, abort.reason);
      return abort.exit_code;
    }
    if (go.tag != kTagGo)
      throw std::logic_error(fmt::format("expected go or abort from the master, got tag {}", go.tag));
    members = decode_members(go.payload, "go message");
  } catch (const DeadlineExceeded& e) {
    log::error("worker rank {}: no go from the master: {}", rank, e.what());
    master_lost_ = true;
    return kExitFailure;
  }

  // 3. Communicators (every member has just shown it is alive), then hello.
  // Workers lost at start-up are not members: the layout is for the rest.
  const std::vector<int> member_ranks(members.members.begin(), members.members.end());
  if (static_cast<int>(member_ranks.size()) != workers) layout = make_worker_layout(config, static_cast<int>(member_ranks.size()));
  std::vector<int> global = member_ranks;
  global.insert(global.begin(), kMasterRank);
  comms.global = factory_.group(global, kGlobalGroupTag);
  comms.local = factory_.cartesian(member_ranks, layout->worker_rows(), layout->worker_cols(), members.local_tag);
  int me = comms.local->rank();
  int member_count = static_cast<int>(member_ranks.size());
  const std::string kernels = blas_kernels();
  comms.global->send(kMasterRank, kTagHello, encode(HelloMessage{kernels, device}));

  // 4. The communication thread takes the communicators; this thread trains.
  WorkerComm comm(std::move(comms), std::chrono::milliseconds(config.runtime.heartbeat_interval_ms), dead_after);
  std::thread comm_thread([&comm] { comm.run(); });
  log::set_thread_name("train");

  int exit_code = kExitOk;
  std::int64_t done = from.generation;
  const FaultInjector faults(FaultPlan(config.faults), rank);
  layout->set_faults(&faults);
  comm.set_progress(WorkerState::kProcessing, done);
  const std::int64_t generations = config.training.generations;
  const std::int64_t every = config.checkpoint.every;
  try {
    for (;;) {  // once, and again for every rehoming after a lost worker
      try {
        const std::string share = layout->start(me, from);
        log::info("worker {} of {}: {}, {} kernels{}", me + 1, member_count, share, kernels,
                  from.generation > 0 ? fmt::format(", from generation {}", from.generation) : "");
        for (std::int64_t g = from.generation; g < generations; ++g) {
          if (const auto abort = comm.aborted()) throw JobAborted(abort->exit_code, abort->reason);
          comm.check_rehome();
          std::vector<std::string> events = faults.at_generation_start(g + 1, [&comm] { comm.go_silent(); });
          if (g == hooks_.throw_at) throw std::runtime_error(fmt::format("test fault in generation {}", g + 1));
          RecordsMessage message;
          message.generation = g + 1;
          message.records = layout->run_generation(g, comm);
          for (const GenerationRecord& r : message.records)
            for (const std::string& line : r.events) log::warn("{}", line);
          if (!message.records.empty())  // the worker's own events go with its first cell's
            message.records.front().events.insert(message.records.front().events.begin(), events.begin(),
                                                   events.end());
          else  // or on their own, when it reports no cell (a data_parallel replica)
            message.events = std::move(events);
          comm.report(message);
          done = g + 1;
          comm.set_progress(WorkerState::kProcessing, done);
          const auto stop_at = comm.stop_at(done);  // the master's stop protocol
          const bool stop_here = stop_at && done == *stop_at && done < generations;
          if (stop_here || (every > 0 && done % every == 0 && done < generations)) {
            const std::string folder = checkpoint_folder(config.output_dir, done);
            const auto began = std::chrono::steady_clock::now();
            CheckpointMessage saved{done, layout->checkpoint(folder), 0.0, {}};
            saved.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
            saved.events = faults.corrupt_checkpoint(done, folder, saved.files);
            for (const std::string& line : saved.events) log::warn("{}", line);
            comm.report_checkpoint(saved);
          }
          if (stop_here) {
            log::info("worker {}: stopped after generation {}, its cells saved", me + 1, done);
            comm.wait_for_done();  // the master ends the run with kExitRestart once the checkpoint is complete
            throw std::logic_error("the master ended a stopped run as done");
          }
        }
        comm.send_result(layout->results());
        comm.set_progress(WorkerState::kFinished, done);
        comm.wait_for_done();  // beating, until the master has written the result
        break;
      } catch (const Rehomed& r) {
        // A worker was lost: the survivors go on from the last checkpoint,
        // with the cells split over them, on a LOCAL of their own.
        const MembersMessage& m = r.message();
        const std::vector<int> survivors(m.members.begin(), m.members.end());
        log::warn("worker rank {}: a worker was lost; going on with ranks {} from generation {}", rank,
                  fmt::join(survivors, ","), m.generation);
        layout.reset();
        from = m.generation > 0 ? ResumeFrom{m.generation, m.folder, read_manifest(m.folder)} : ResumeFrom{};
        done = from.generation;
        comm.set_progress(WorkerState::kProcessing, done);
        member_count = static_cast<int>(survivors.size());
        layout = make_worker_layout(config, member_count);
        layout->set_faults(&faults);
        comm.replace_local(
            factory_.cartesian(survivors, layout->worker_rows(), layout->worker_cols(), m.local_tag));
        me = comm.local_rank();
      }
    }
  } catch (const JobAborted& e) {
    if (e.exit_code() == kExitRestart)
      log::info("worker rank {}: {}", rank, e.what());
    else
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
