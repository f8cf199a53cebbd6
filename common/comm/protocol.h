// The wire protocol of a cellgan job, step by step.
//
// Every wait below has a deadline (job_comms.h, communicator.h): no rank
// ever waits for a peer forever. W is the number of workers; the master is
// world rank 0, workers are 1..W.
//
//  0. Identity, WORLD: each worker's first message, kTagIdentity:
//     IdentityMessage{pid, host}, so that the master can kill a hung worker
//     on its own host.
//  1. Start-up, WORLD. The master validates the configuration (beating
//     kTagMasterHeartbeat meanwhile) and sends
//     every worker kTagStart: StartMessage{ok, exit code, error,
//     config_yaml, source}. On ok = false each worker exits with that code
//     without output, so bad input is one line, printed by the master
//     alone. A worker waits for it at most start_timeout() (it cannot know
//     the configured deadline yet).
//  2. Ready, WORLD. Each worker sets up what needs no communicator (the
//     configuration, its layout) and sends kTagReady, or kTagFailure if
//     that failed. The master waits for every worker's answer (deadline
//     runtime.dead_after_ms), then sends each kTagGo (empty), or
//     kTagAbort to every worker that is ready when one failed or stayed
//     silent. The go names the members (MembersMessage): when the job
//     survives a lost rank, a worker silent at this point is left out. A
//     worker waits for go until the master is silent for dead_after_ms.
//     StartMessage also names the checkpoint a resumed run starts from.
//  3. Communicators, entered only after go, when every member has just
//     shown it is alive: GLOBAL = group(master + members); workers: LOCAL
//     = cartesian(members) with the layout's worker grid. Then each
//     worker sends the master, on GLOBAL, kTagHello: HelloMessage{BLAS
//     kernels}.
//  4. Throughout, WORLD, every runtime.heartbeat_interval_ms:
//     worker -> master kTagHeartbeat: HeartbeatMessage{state, generation};
//     master -> worker kTagMasterHeartbeat (empty). A worker's
//     communication thread beats whatever its training thread does. A
//     worker silent for dead_after_ms is declared dead by the master; a
//     master silent that long is declared dead by each worker.
//  5. Every generation g (0-based), LOCAL: the layout's exchange between
//     workers (coevolution: for each of its cells that another worker
//     needs, kTagHalo: HaloMessage{g, cell, centre G, centre D} to that
//     worker, in cell order; halos of later generations wait their turn.
//     data_parallel: kTagGradients, the chunks of each all-reduce, raw
//     float32/fp16/bf16 values, in the algorithm's order, ring or
//     reduce_broadcast (worker/gradient_allreduce.h); `mpi` sends none and
//     calls MPI_Iallreduce on LOCAL from the communication thread instead).
//     With hierarchy two_level, first kTagHosts: each worker's host name
//     to every other, once (worker/node_map.h). `nccl` sends none either,
//     but for kTagNcclId: worker 1's NCCL unique id (128 bytes) to every
//     other worker, when they join NCCL (worker/nccl_allreduce.h).
//     two_level with `mpi` sums across nodes with MPI_Iallreduce on a
//     communicator of the nodes' leaders, made by them alone once every
//     leader has sent every other kTagGroup (empty): all are alive then.
//  6. Every generation, WORLD: kTagRecords: RecordsMessage{g + 1, typed
//     GenerationRecords of the worker's cells, previews inside them on
//     preview generations, events lines (injected faults, non-finite
//     individuals replaced) inside them}. The master writes metrics.jsonl
//     and those lines of events.log from them.
//  7. End, GLOBAL: each worker sends kTagResult: ResultMessage{cells,
//     encoded ensembles} and goes on beating. Once it has every worker's
//     result, the master scores and writes the result while it goes on
//     beating too, then sends every worker kTagDone (empty), or kTagAbort
//     if writing the result failed. Each worker then exits (kExitOk).
//  7b. Checkpoints, WORLD: after each checkpointed generation a worker
//     sends kTagCheckpoint: CheckpointMessage{generation, its cells' files};
//     the master writes the manifest once every cell is in.
//  7c. Stop, WORLD: master kTagPause; each worker's communication thread
//     answers kTagPaused{c}; master kTagStopAt{T = max c + 1}; the workers
//     checkpoint at T and the master ends the run with kTagAbort{75}
//     (WorkerComm::stop_at).
//  7d. Rehoming, WORLD: master kTagRehome: MembersMessage{survivors,
//     checkpoint generation and folder, LOCAL tag}; the survivors make a new
//     LOCAL and go on from that checkpoint.
//  8. Errors. A worker whose training fails sends kTagFailure:
//     FailureMessage{reason, exit code} on WORLD and exits with that code
//     (kExitFailure, or kExitDiskFull for a full disk: error.h). When the
//     master ends the run early (a failed or dead worker, or its own
//     error), it sends every worker still alive kTagAbort:
//     AbortMessage{exit code, reason}; each exits with that code. Nothing
//     is ever sent to a worker declared lost (docs/architecture.md).
//
// Thread-safety: pure encode/decode functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/checkpoint_store.h"
#include "common/comm/communicator.h"
#include "common/generation_record.h"

namespace cellgan {

class ByteWriter;

enum Tag : int {
  kTagStart = 1,
  kTagHeartbeat = 2,
  kTagRecords = 3,
  kTagHalo = 4,
  kTagHello = 5,
  kTagResult = 6,
  kTagFailure = 7,
  kTagAbort = 8,
  kTagMasterHeartbeat = 9,
  kTagReady = 10,
  kTagGo = 11,
  kTagDone = 12,
  kTagCheckpoint = 13,
  kTagPause = 14,
  kTagPaused = 15,
  kTagStopAt = 16,
  kTagRehome = 17,
  kTagIdentity = 18,
  kTagGradients = 30,  // data_parallel's all-reduce chunks (step 5)
  kTagHosts = 31,      // data_parallel two_level: each worker's host name, once (step 5)
  kTagNcclId = 32,     // data_parallel nccl: worker 1's NCCL unique id to the others, at each join (step 5)
  kTagGroup = 33,      // data_parallel two_level mpi: each leader to the others, before their communicator (step 5)
};

// The master's rank in WORLD and GLOBAL.
inline constexpr int kMasterRank = 0;
// The members of GLOBAL (the master and every worker) and of LOCAL (the
// workers) in a job of `workers` workers, as world ranks.
std::vector<int> global_ranks(int workers);
std::vector<int> worker_ranks(int workers);
// How long a worker waits for the start message: the default
// runtime.dead_after_ms, since the configured one comes with the message.
std::chrono::milliseconds start_timeout();

// Group-creation tags (MPI_Comm_create_group).
inline constexpr int kGlobalGroupTag = 101;
inline constexpr int kLocalGroupTag = 102;

// kFailed: the training thread hit an error; the master ends the run.
enum class WorkerState : std::uint8_t { kInactive = 0, kProcessing = 1, kFinished = 2, kFailed = 3 };
const char* to_string(WorkerState state);

struct StartMessage {
  bool ok = true;
  std::int32_t exit_code = 0;  // when !ok: the code every worker exits with
  std::string error;           // when !ok
  std::string config_yaml;  // the resolved configuration
  std::string config_source;
  // Where the run starts: 0, or the generation of the complete checkpoint
  // in `resume_folder` (common/checkpoint_store.h).
  std::int64_t resume_generation = 0;
  std::string resume_folder;
};
Bytes encode(const StartMessage& m);
StartMessage decode_start(const Bytes& b);

struct HelloMessage {
  std::string blas_kernels;  // math_kernels.h: blas_kernels()
  std::string device;        // common/nn/device.h: describe_device()
};
Bytes encode(const HelloMessage& m);
HelloMessage decode_hello(const Bytes& b);

struct HeartbeatMessage {
  WorkerState state = WorkerState::kInactive;
  std::int64_t generation = 0;  // generations completed
};
Bytes encode(const HeartbeatMessage& m);
HeartbeatMessage decode_heartbeat(const Bytes& b);

struct HaloMessage {
  std::int64_t generation = 0;
  std::int32_t cell = 0;
  Bytes generator;
  Bytes discriminator;
};
Bytes encode(const HaloMessage& m);
HaloMessage decode_halo(const Bytes& b);

struct RecordsMessage {
  std::int64_t generation = 0;  // generations completed, 1-based
  std::vector<GenerationRecord> records;  // one per cell of the worker
  // The worker's own events lines (its injected faults) when it has no
  // record to carry them (data_parallel's replicas other than the first);
  // otherwise they travel in the first record's events.
  std::vector<std::string> events;
};
Bytes encode(const RecordsMessage& m);
RecordsMessage decode_records(const Bytes& b);

struct ResultMessage {
  std::vector<std::int32_t> cells;
  std::vector<Bytes> ensembles;  // encoded Ensemble per cell
};
Bytes encode(const ResultMessage& m);
ResultMessage decode_result(const Bytes& b);
// The bytes of encode(ResultMessage) built one ensemble at a time:
// write(i, w) appends cell i's encoded ensemble to `w`, so a worker never
// holds its ensembles apart from the message. `size_bound` reserves room.
Bytes encode_result(const std::vector<std::int32_t>& cells, std::size_t size_bound,
                    const std::function<void(std::size_t, ByteWriter&)>& write);

// kTagIdentity, a worker's first message: its process and host, so that
// the master can kill a hung worker on its own host by PID.
struct IdentityMessage {
  std::int64_t pid = 0;
  std::string host;
};
Bytes encode(const IdentityMessage& m);
IdentityMessage decode_identity(const Bytes& b);

// kTagGo: the workers of the job (world ranks, ascending): GLOBAL is the
// master and them, LOCAL them alone. kTagRehome: after a worker is lost,
// the survivors (world ranks) go on from the checkpoint taken after
// `generation` generations (0: from the start) in `folder`, as a job of
// `members.size()` workers whose LOCAL is made with the tag `local_tag`.
struct MembersMessage {
  std::vector<std::int32_t> members;
  std::int64_t generation = 0;
  std::string folder;
  std::int32_t local_tag = 0;
};
Bytes encode(const MembersMessage& m);
MembersMessage decode_members(const Bytes& b, const char* what);

// A worker's cells saved after `generation` generations (kTagCheckpoint).
struct CheckpointMessage {
  std::int64_t generation = 0;
  std::vector<CheckpointFile> files;
  double seconds = 0.0;             // the worker's time writing them
  std::vector<std::string> events;  // for events.log (an injected corruption)
};
Bytes encode(const CheckpointMessage& m);
CheckpointMessage decode_checkpoint(const Bytes& b);

// kTagPaused: the generations a worker had completed when it paused;
// kTagStopAt: the generation every worker runs to, checkpoints and stops at.
struct GenerationMessage {
  std::int64_t generation = 0;
};
Bytes encode(const GenerationMessage& m);
GenerationMessage decode_generation(const Bytes& b, const char* what);

struct FailureMessage {
  std::string reason;                  // one line: what failed on the worker
  std::int32_t exit_code = 1;          // the worker's (error.h's exit_code_of); the run ends with it
};
Bytes encode(const FailureMessage& m);
FailureMessage decode_failure(const Bytes& b);

struct AbortMessage {
  std::int32_t exit_code = 1;  // the code every rank exits with (error.h)
  std::string reason;
};
Bytes encode(const AbortMessage& m);
AbortMessage decode_abort(const Bytes& b);

}  // namespace cellgan
