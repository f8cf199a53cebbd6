// A worker rank (see worker.h).
#include "worker/worker.h"

#include <torch/torch.h>

#include <unistd.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/comm/protocol.h"
#include "common/checkpoint_store.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/nn/device.h"
#include "common/nn/run_checks.h"
#include "common/process_stats.h"
#include "worker/checkpoint_writer.h"
#include "worker/fault_injector.h"
#include "worker/worker_comm.h"
#include "worker/worker_layout.h"

namespace cellgan {
namespace {

// What start-up hands to the training: the configuration, where this
// worker computes, its layout and where the run resumes.
struct Setup {
  Setup() = default;
  Setup(const Setup&) = delete;
  Setup& operator=(const Setup&) = delete;
  Config config;
  torch::Device device = torch::kCPU;  // runtime.device, resolved once
  std::unique_ptr<WorkerLayout> layout;
  ResumeFrom from;
};

// Where the training stands: this worker's rank among the members of the
// current epoch (LOCAL), how many they are, and the generations done.
struct Place {
  int me = 0;
  int members = 0;
  std::int64_t done = 0;
};

double seconds_since(std::chrono::steady_clock::time_point began) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

// The master said nothing within its deadline: it is presumed lost.
struct MasterSilent {};

// 1. The master's verdict on the configuration; its heartbeats while it
// reads its inputs keep the wait going. None when the master stays silent
// (said in the log).
std::optional<StartMessage> receive_start(Communicator& world, int rank) {
  for (;;) {
    const std::optional<Message> m = receive_blocking(world, kMasterRank, kAnyTag, start_timeout());
    if (!m) {
      log::error("worker rank {}: no start message from the master: {}", rank,
                 missed_deadline(kMasterRank, kAnyTag, start_timeout()));
      return std::nullopt;
    }
    if (m->tag == kTagMasterHeartbeat) continue;
    if (m->tag != kTagStart)
      throw std::logic_error(fmt::format("expected the start message from the master, got tag {}", m->tag));
    return decode_start(m->payload);
  }
}

// 2. What needs no communicator: the configuration, the device, the layout
// and the checkpoint to resume from. Fills `s` in place: the layout keeps
// a reference to s.config, so a Setup is never moved.
void prepare(const StartMessage& start, int rank, int workers, bool throw_at_start, Setup& s) {
  s.config = parse_config(start.config_yaml, start.config_source);
  if (start.resume_generation > 0)
    s.from = ResumeFrom{start.resume_generation, start.resume_folder, read_manifest(start.resume_folder)};
  log::set_level(log::parse_level(s.config.runtime.log_level));
  torch::set_num_threads(static_cast<int>(s.config.runtime.threads));
  s.device = resolve_device(s.config.runtime.device, fmt::format("{}: runtime.device", s.config.source));
  log::info("worker rank {}: device {}", rank, describe_device(s.device));
  check_runs_on(s.config, s.device);  // InputError: fp16, nccl or cuda_graphs where they cannot run
  s.layout = make_worker_layout(s.config, workers, s.device);
  if (throw_at_start) throw std::runtime_error("test fault at start-up");
}

// 3. Go (the members of the run), the master's abort (its exit code), or
// its silence for `dead_after` (said in the log).
std::variant<MembersMessage, int, MasterSilent> wait_for_go(Communicator& world, int rank,
                                                            std::chrono::milliseconds dead_after) {
  std::optional<Message> heard = receive_blocking(world, kMasterRank, kAnyTag, dead_after);
  while (heard && heard->tag == kTagMasterHeartbeat) heard = receive_blocking(world, kMasterRank, kAnyTag, dead_after);
  if (!heard) {
    log::error("worker rank {}: no go from the master: {}", rank, missed_deadline(kMasterRank, kAnyTag, dead_after));
    return MasterSilent{};
  }
  const Message& go = *heard;
  if (go.tag == kTagAbort) {
    const AbortMessage abort = decode_abort(go.payload);
    if (abort.exit_code == kExitDiskFull)  // the master says it, once
      log::debug("worker rank {}: run ended by the master: {}", rank, abort.reason);
    else
      log::error("worker rank {}: run ended by the master: {}", rank, abort.reason);
    return abort.exit_code;
  }
  if (go.tag != kTagGo) throw std::logic_error(fmt::format("expected go or abort from the master, got tag {}", go.tag));
  return decode_members(go.payload, "go message");
}

// The generations from `place.done` to the last, then the result: none
// once the master has taken it (kTagDone), else the interruption that came
// first (worker_exchange.h). A stop is one: the master ends a stopped run
// with an abort of kExitRestart once its checkpoint is complete.
std::optional<Interruption> train_generations(WorkerComm& comm, Setup& s, CheckpointWriter& writer,
                                              const FaultInjector& faults, Place& place,
                                              const Worker::TestHooks& hooks) {
  const std::int64_t generations = s.config.training.generations;
  const std::int64_t every = s.config.checkpoint.every;
  for (std::int64_t g = place.done; g < generations; ++g) {
    if (auto interruption = comm.interrupted()) return interruption;
    if (faults.strikes_at(g + 1)) {  // written, the reports with the records in the master's hands, and
      writer.drain();                // what the other workers are owed in theirs
      if (auto interruption = comm.flush_all()) return interruption;
    }
    std::vector<std::string> events = faults.at_generation_start(g + 1, [&comm] { comm.go_silent(); });
    if (g == hooks.throw_at) throw std::runtime_error(fmt::format("test fault in generation {}", g + 1));
    RecordsMessage message;
    message.generation = g + 1;
    Waited<std::vector<GenerationRecord>> records = s.layout->run_generation(g, comm);
    if (auto* interruption = std::get_if<Interruption>(&records)) return std::move(*interruption);
    message.records = std::move(std::get<std::vector<GenerationRecord>>(records));
    for (const GenerationRecord& r : message.records)
      for (const std::string& line : r.events) log::warn("{}", line);
    if (!message.records.empty())  // the worker's own events go with its first cell's
      message.records.front().events.insert(message.records.front().events.begin(), events.begin(), events.end());
    else  // or on their own, when it reports no cell (a data_parallel replica)
      message.events = std::move(events);
    comm.report(message);
    place.done = g + 1;
    comm.set_progress(WorkerState::kProcessing, place.done);
    Waited<std::optional<std::int64_t>> stop_at = comm.stop_at(place.done);  // the master's stop protocol
    if (auto* interruption = std::get_if<Interruption>(&stop_at)) return std::move(*interruption);
    const std::optional<std::int64_t> stop = std::get<std::optional<std::int64_t>>(stop_at);
    const bool stop_here = stop && place.done == *stop && place.done < generations;
    if (stop_here || (every > 0 && place.done % every == 0 && place.done < generations)) {
      const auto began = std::chrono::steady_clock::now();
      Waited<std::vector<CellBytes>> encoded = s.layout->checkpoint(comm);  // only the encoding on this thread
      if (auto* interruption = std::get_if<Interruption>(&encoded)) return std::move(*interruption);
      std::vector<CellBytes> cells = std::move(std::get<std::vector<CellBytes>>(encoded));
      const CheckpointId id{place.done, s.config.seed, s.config.grid.rows, s.config.grid.cols};
      writer.write(id, checkpoint_folder(s.config.output_dir, place.done), std::move(cells), seconds_since(began));
    }
    if (stop_here) {
      writer.drain();
      log::info("worker {}: stopped after generation {}, its cells saved", place.me + 1, place.done);
      if (auto interruption = comm.wait_for_done()) return interruption;
      throw std::logic_error("the master ended a stopped run as done");
    }
  }
  writer.drain();
  // The checkpoint reports (WORLD) before the result (GLOBAL).
  if (auto interruption = comm.flush_to_master()) return interruption;
  comm.send_result(s.layout->results());
  comm.set_progress(WorkerState::kFinished, place.done);
  return comm.wait_for_done();  // beating, until the master has written the result
}

// A worker was lost: the survivors go on from the last checkpoint, with the
// cells split over them, on a LOCAL of their own. None once there, or the
// abort that came first.
std::optional<Aborted> rehome(const MembersMessage& m, int rank, JobCommsFactory& factory, WorkerComm& comm,
                              Setup& s, CheckpointWriter& writer, const FaultInjector& faults, Place& place) {
  const std::vector<int> survivors(m.members.begin(), m.members.end());
  log::warn("worker rank {}: a worker was lost; going on with ranks {} from generation {}", rank,
            fmt::join(survivors, ","), m.generation);
  writer.drain();
  s.layout.reset();
  s.from = m.generation > 0 ? ResumeFrom{m.generation, m.folder, read_manifest(m.folder)} : ResumeFrom{};
  place.done = s.from.generation;
  comm.set_progress(WorkerState::kProcessing, place.done);
  place.members = static_cast<int>(survivors.size());
  s.layout = make_worker_layout(s.config, place.members, s.device);
  s.layout->set_faults(&faults);
  auto local = factory.cartesian(survivors, s.layout->worker_rows(), s.layout->worker_cols(), m.local_tag);
  if (auto aborted = comm.replace_local(std::move(local))) return aborted;
  place.me = comm.local_rank();
  return std::nullopt;
}

// The run ended by the master's word (or its silence): this worker's exit
// code is the run's. A stop is no error here; a full disk is the master's
// to say, once.
int ended(const Aborted& abort, int rank) {
  if (abort.exit_code == kExitDiskFull)
    log::debug("worker rank {}: run ended: {}", rank, abort.reason);
  else if (abort.exit_code == kExitRestart)
    log::info("worker rank {}: {}", rank, abort.reason);
  else
    log::error("worker rank {}: run ended: {}", rank, abort.reason);
  return abort.exit_code;
}

// 6. Training, rehomings included, to this worker's exit code: kExitOk
// once the master has the result, the run's code when the master ends it,
// or the code of the failure (an exception) that ends it here.
int train(JobCommsFactory& factory, const Worker::TestHooks& hooks, WorkerComm& comm, Setup& setup, Place& place,
          const std::string& kernels) {
  const int rank = factory.world_rank();
  comm.set_progress(WorkerState::kProcessing, place.done);
  const auto failed = [&](const std::exception& e) {
    const int code = exit_code_of(e);
    if (code == kExitDiskFull)  // the master says it, once
      log::debug("worker rank {}: {}", rank, e.what());
    else
      log::error("worker rank {}: {}", rank, e.what());
    comm.send_failure(fmt::format("generation {}: {}", place.done + 1, e.what()), code);
    return code;
  };
  try {  // from the faults' plan on: whatever throws is reported, never std::terminate
    const FaultInjector faults(FaultPlan(setup.config.faults), rank);
    setup.layout->set_faults(&faults);
    // Written and reported off this thread; ended before the communication thread is.
    CheckpointWriter writer(
        [&comm, &hooks](const CheckpointMessage& saved) {
          if (saved.generation != hooks.unreported_checkpoint) comm.report_checkpoint(saved);
        },
        &faults);
    try {  // a failure is sent before the writer finishes the checkpoints it has queued
      for (;;) {  // once, and again for every rehoming after a lost worker
        const std::string share = setup.layout->start(place.me, setup.from);
        log::info("worker {} of {}: {}, {} kernels{}", place.me + 1, place.members, share, kernels,
                  setup.from.generation > 0 ? fmt::format(", from generation {}", setup.from.generation) : "");
        const std::optional<Interruption> ending = train_generations(comm, setup, writer, faults, place, hooks);
        if (!ending) return kExitOk;
        if (const auto* aborted = std::get_if<Aborted>(&*ending)) return ended(*aborted, rank);
        const MembersMessage& members = std::get<Rehoming>(*ending).members;
        if (auto aborted = rehome(members, rank, factory, comm, setup, writer, faults, place))
          return ended(*aborted, rank);
      }
    } catch (const std::exception& e) {
      return failed(e);
    }
  } catch (const std::exception& e) {
    return failed(e);
  }
}

}  // namespace

Worker::Worker(JobCommsFactory& factory) : factory_(factory) {}

int Worker::run() {
  const int rank = factory_.world_rank();
  const int workers = factory_.world_size() - 1;
  JobComms comms;
  comms.world = factory_.world();
  // 0. Who this worker is: the master kills a hung worker on its host by PID.
  comms.world->send(kMasterRank, kTagIdentity,
                    encode(IdentityMessage{static_cast<std::int64_t>(::getpid()), host_name()}));
  const std::optional<StartMessage> heard = receive_start(*comms.world, rank);
  if (!heard) {
    master_lost_ = true;
    return kExitFailure;
  }
  const StartMessage& start = *heard;
  if (!start.ok) return start.exit_code;  // the master has printed the reason
  if (hooks_.vanish_at_start) return kExitFailure;
  Setup setup;
  try {
    prepare(start, rank, workers, hooks_.throw_at_start, setup);
  } catch (const std::exception& e) {
    log::error("worker rank {}: {}", rank, e.what());
    comms.world->send(kMasterRank, kTagFailure,
                      encode(FailureMessage{fmt::format("start-up: {}", e.what()), exit_code_of(e)}));
    flush_sends(*comms.world, start_timeout());
    return exit_code_of(e);
  }
  const auto dead_after = std::chrono::milliseconds(setup.config.runtime.dead_after_ms);
  comms.world->send(kMasterRank, kTagReady, Bytes{});
  auto go = wait_for_go(*comms.world, rank, dead_after);
  if (const int* code = std::get_if<int>(&go)) return *code;
  if (std::holds_alternative<MasterSilent>(go)) {
    master_lost_ = true;
    return kExitFailure;
  }
  const MembersMessage members = std::get<MembersMessage>(std::move(go));
  // 4. Communicators (every member has just shown it is alive), then hello.
  // Workers lost at start-up are not members: the layout is for the rest.
  const std::vector<int> member_ranks(members.members.begin(), members.members.end());
  if (static_cast<int>(member_ranks.size()) != workers)
    setup.layout = make_worker_layout(setup.config, static_cast<int>(member_ranks.size()), setup.device);
  std::vector<int> global = member_ranks;
  global.insert(global.begin(), kMasterRank);
  comms.global = factory_.group(global, kGlobalGroupTag);
  comms.local = factory_.cartesian(member_ranks, setup.layout->worker_rows(), setup.layout->worker_cols(), members.local_tag);
  Place place{comms.local->rank(), static_cast<int>(member_ranks.size()), setup.from.generation};
  const std::string kernels = blas_kernels();
  comms.global->send(kMasterRank, kTagHello, encode(HelloMessage{kernels, describe_device(setup.device)}));
  // 5. The communication thread takes the communicators; this thread trains.
  WorkerComm comm(std::move(comms), std::chrono::milliseconds(setup.config.runtime.heartbeat_interval_ms), dead_after);
  std::thread comm_thread([&comm] { comm.run(); });
  log::set_thread_name("train");
  const int exit_code = train(factory_, hooks_, comm, setup, place, kernels);
  comm.finish();
  comm_thread.join();
  master_lost_ = comm.master_lost();
  log::info("worker {} done: peak RSS {:.1f} MB", place.me + 1, static_cast<double>(peak_rss_bytes()) / 1e6);
  return exit_code;
}

}  // namespace cellgan
