// run.json: the machine-readable record of a run, written by the master in
// the run folder (run_files.h) and read by `cellgan launch` and
// `cellgan sweep` instead of parsing logs.
//
//   {"layout": "coevolution", "grid": [3, 3], "workers": 3, "device":
//    "cpu", "seed": 1, "generations": 40, "generation": 12,
//    "status": "running", "exit_code": null, "message": "",
//    "stretches": 2, "objective": "fid", "seconds": 512.3,
//    "spans": [[1795000000.1, 1795000300.7], [1795000400.2, 1795000612.0]],
//    "exchange": "sync"}
//
// - status: "running" while the master lives (written at start and at each
//   written generation), then "finished" (exit 0), "stopped" (checkpointed,
//   exit 75: run again with --resume auto) or "failed" (exit 1). A run
//   whose master was killed stays "running": a reader that finds no live
//   job treats it as interrupted.
// - generation: the generations written to metrics.jsonl.
// - stretches: how many times the run was started in this folder (1 for
//   a run never resumed).
// - objective: the score the run minimises (fid, or mode_tvd for the toy
//   mixtures); "" in a run.json written before it was recorded.
// - seconds: the run's wall time so far, every stretch summed.
// - spans: each stretch's start and last record, Unix seconds, oldest
//   first (a sweep flags runs whose spans overlap).
// - exchange: grid.exchange, "sync" or "async" (whose result depends on
//   timing when workers > 1); "sync" in a run.json written before it was
//   recorded.
//
// Thread-safety: plain value type and free functions of files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cellgan {

struct RunState {
  std::string layout;  // coevolution, data_parallel, per_class
  int rows = 0;
  int cols = 0;
  int workers = 0;
  std::string device = "cpu";
  std::uint64_t seed = 0;
  std::int64_t generations = 0;  // configured
  std::int64_t generation = 0;   // written so far
  std::string status = "running";
  std::optional<int> exit_code;
  std::string message;
  int stretches = 1;
  std::string objective;
  double seconds = 0.0;
  std::vector<std::pair<double, double>> spans;
  std::string exchange = "sync";
};

// Now, in seconds since the Unix epoch (the clock of `spans`).
double unix_seconds();

// The run.json text of `state` (one JSON object and a newline).
std::string to_json(const RunState& state);
// Writes `dir`/run.json atomically. Returns "" or why it could not; throws
// DiskFull (error.h) when there is no space for it.
std::string write_run_state(const std::string& dir, const RunState& state);
// Rewrites `dir`/run.json in place, within the space the file holds
// already: how a run that ends on a full disk records it. Not atomic (a
// reader may see it half written). False when it cannot (no run.json, no
// room in its blocks, an error).
bool write_run_state_in_place(const std::string& dir, const RunState& state);
// Sets run.json's modification time to now, leaving its content: a master
// busy with a long step that writes nothing else (scoring the final
// ensembles) shows it is alive to `cellgan launch`'s progress watch. No
// effect when there is no run.json.
void touch_run_state(const std::string& dir);
// Reads `dir`/run.json: std::nullopt when there is none; throws
// std::runtime_error naming the file when it is not what to_json writes.
std::optional<RunState> read_run_state(const std::string& dir);

}  // namespace cellgan
