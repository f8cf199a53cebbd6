// The master's side of the live status (see job_status.h).
#include "master/job_status.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <filesystem>

#include "common/error.h"
#include "common/run_files.h"
#include "grid/partition.h"

namespace cellgan {

std::unique_ptr<StatusBoard> make_job_status_board(const Config& config, const std::string& objective, int workers,
                                                   const std::vector<int>& owners,
                                                   StatusBoard::Clock::time_point started) {
  return std::make_unique<StatusBoard>(static_cast<int>(config.grid.rows), static_cast<int>(config.grid.cols),
                                       to_string(config.layout), objective, config.training.generations, workers,
                                       owners, started);
}

std::unique_ptr<StatusServer> start_status_server(const Config& config, const StatusBoard& board) {
  if (config.status.port == 0) return nullptr;
  unsigned char address[sizeof(in6_addr)];
  if (inet_pton(AF_INET, config.status.bind.c_str(), address) != 1 &&
      inet_pton(AF_INET6, config.status.bind.c_str(), address) != 1)
    throw InputError(fmt::format("{}: status.bind: '{}' is not an IP address: expected e.g. 127.0.0.1, 0.0.0.0 or ::1",
                                 config.source, config.status.bind));
  StatusServerOptions options;
  options.bind = config.status.bind;
  options.port = static_cast<int>(config.status.port);
  options.metrics_path = (std::filesystem::path(config.output_dir) / run_files::kMetrics).string();
  options.objective = board.snapshot(StatusBoard::Clock::now()).objective;
  try {
    return std::make_unique<StatusServer>(board, options);
  } catch (const StatusServerError& e) {
    throw InputError(fmt::format("{}: status.port: cannot serve the status on {}: expected a port free on an "
                                 "address of this host (status.bind), or 0 to turn the status server off",
                                 config.source, e.what()));
  }
}

std::string worker_status_name(WorkerState state, HeartbeatMonitor::Liveness liveness, bool failed) {
  if (failed || state == WorkerState::kFailed) return "failed";
  if (liveness == HeartbeatMonitor::Liveness::kDead) return "dead";
  if (liveness == HeartbeatMonitor::Liveness::kLate) return "late";
  if (state == WorkerState::kInactive) return "starting";
  return to_string(state);
}

void note_records(StatusBoard& board, int worker, std::int64_t generation,
                  const std::vector<GenerationRecord>& records, const std::string& objective) {
  for (const GenerationRecord& r : records) {
    const auto it = r.scores.find(objective);
    board.cell_generation(r.cell, worker, generation,
                          it == r.scores.end() ? std::nullopt : std::optional<double>(it->second));
  }
}

}  // namespace cellgan
