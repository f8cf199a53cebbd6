// The wire protocol of a coevolution run, step by step (STYLE.md, 10).
//
// Tags and payloads (all payloads are ByteWriter encodings):
//
//  1. Start-up, WORLD. The master validates the configuration and sends
//     every worker kTagStart: StartMessage{ok, error, config_yaml}. On
//     ok = false each worker exits with kExitBadInput without output, so
//     bad input is one line, printed by the master alone, and no rank hangs.
//  2. Communicators. All ranks: GLOBAL = create_group({0..W}); at once
//     every member calls gather(root 0) on it: a worker gives the name of
//     its BLAS kernels (blas_kernels(), as raw characters), the master
//     nothing. Workers: LOCAL = create_cartesian({1..W}, partition dims).
//  3. Every generation g (0-based), LOCAL. Each worker sends, for each of
//     its cells that another worker needs, kTagHalo: HaloMessage{g, cell,
//     centre G, centre D} to each such worker, then waits for all the
//     halos of generation g it needs. Halos of later generations that
//     arrive early are kept until asked for.
//  4. Each generation, WORLD. The worker's training thread reports its
//     cells' records: kTagRecords: RecordsMessage{g + 1, JSON lines,
//     previews} (the number of generations completed, 1-based; previews
//     only on generations that are multiples of evaluation.preview_every).
//  5. Throughout, WORLD. The worker's communication thread sends
//     kTagHeartbeat: HeartbeatMessage{state, generation} every
//     heartbeat_interval_ms, whatever the training thread is doing.
//  6. End, GLOBAL. Every member calls gather(root 0): a worker gives
//     ResultMessage{cells, encoded ensembles}; the master gives nothing.
//     Then each worker sends a last kTagHeartbeat with state kFinished.
//
// Thread-safety: pure encode/decode functions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/comm/communicator.h"

namespace cellgan {

class ByteWriter;

enum Tag : int {
  kTagStart = 1,
  kTagHeartbeat = 2,
  kTagRecords = 3,
  kTagHalo = 4,
};

// Group-creation tags for MPI_Comm_create_group.
inline constexpr int kGlobalGroupTag = 101;
inline constexpr int kLocalGroupTag = 102;

// kFailed: the training thread hit an error; the master ends the run.
enum class WorkerState : std::uint8_t { kInactive = 0, kProcessing = 1, kFinished = 2, kFailed = 3 };
const char* to_string(WorkerState state);

struct StartMessage {
  bool ok = true;
  std::string error;        // when !ok
  std::string config_yaml;  // the resolved configuration
  std::string config_source;
};
Bytes encode(const StartMessage& m);
StartMessage decode_start(const Bytes& b);

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
  std::int64_t generation = 0;
  std::string json_lines;  // one line per cell, each ending in '\n'
  std::int32_t cells = 0;
  // Preview samples by cell, on preview generations only (row-major floats).
  std::map<int, std::vector<float>> previews;
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

}  // namespace cellgan
