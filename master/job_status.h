// The master's side of the live status: making the StatusBoard of a job
// (status_board.h) and its StatusServer (status_server.h) from the
// configuration, and the small translations the master's control loop
// uses to keep the board up to date.
//
// Thread-safety: free functions; the board they write is thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/comm/protocol.h"
#include "common/config.h"
#include "common/generation_record.h"
#include "master/heartbeat_monitor.h"
#include "master/status_board.h"
#include "master/status_server.h"

namespace cellgan {

// The board of a job of `workers` workers: the grid of `config`, cell i
// owned by worker `owners[i]` (MasterLayout::cell_owners()). `objective`
// names the score.
std::unique_ptr<StatusBoard> make_job_status_board(const Config& config, const std::string& objective, int workers,
                                                   const std::vector<int>& owners,
                                                   StatusBoard::Clock::time_point started);

// The server of `config.status`, or null when status.port is 0. Throws
// InputError naming status.bind when it is not an IP address, and
// status.port (and the address) when it cannot listen.
std::unique_ptr<StatusServer> start_status_server(const Config& config, const StatusBoard& board);

// The state the board shows for a worker: failed, dead, late, or what it
// last said (starting before its first message, processing, finished).
std::string worker_status_name(WorkerState state, HeartbeatMonitor::Liveness liveness, bool failed);

// A worker's records of one generation onto the board.
void note_records(StatusBoard& board, int worker, std::int64_t generation,
                  const std::vector<GenerationRecord>& records, const std::string& objective);

}  // namespace cellgan
