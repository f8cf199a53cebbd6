// What a sweep reads back from one run folder, whoever ran it (cellgan
// sweep through mpirun, or a SLURM job array):
//
//   config.yaml    grid rows and columns, seed, generations, dataset,
//                  layout, and every key's value (to find the keys a
//                  sweep varied)
//   run.json       the worker count W, the layout, the wall seconds of
//                  every stretch summed and their spans (common/
//                  run_state.h)
//   metrics.jsonl  the phase seconds of every cell and generation
//                  (common/run_records.h)
//   result.json    the final scores (and the wall seconds of a run
//                  written before run.json held them; common/
//                  run_records.h); its presence marks a finished run
//
// Timing rule (the same as tests/bench/b_report.py): generation 1 is
// warm-up and left out when the run has more than one. The phases gather,
// idle and communicate (data_parallel's all-reduce) are communication, the
// others computation. A worker trains its cells one after the other and
// its idle time is shared among them, so the phase seconds of one
// generation, summed over all cells and divided by W, are the wall time
// of that generation on a worker; data_parallel writes one record a
// generation, the replicas' wall time, which is not divided.
//
// Thread-safety: pure functions of the files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cellgan::sweep {

struct RunRecord {
  std::string folder;
  int rows = 0;
  int cols = 0;
  int workers = 0;  // 0 without run.json
  std::uint64_t seed = 0;
  std::int64_t generations = 0;  // configured
  std::string dataset;
  std::string layout;     // coevolution, data_parallel, per_class
  std::map<std::string, std::string> settings;  // every key of config.yaml, dotted ("training.batch_size"), as written
  std::map<std::string, std::string> values;    // of them, the keys the sweep varied (keep_varied_keys)
  std::vector<std::pair<double, double>> spans;  // run.json's: each stretch's start and end, Unix seconds
  std::string status;     // run.json's: running, finished, stopped, failed ("" without run.json)
  std::string message;    // run.json's message (why it failed)
  bool finished = false;  // result.json is present
  // From metrics.jsonl, over the generations counted (see above):
  std::int64_t generations_timed = 0;
  double seconds_per_generation = 0.0;   // wall seconds of one generation on a worker
  double compute_per_generation = 0.0;   // of it, computation (per worker)
  double comm_per_generation = 0.0;      // of it, communication: gather + idle (per worker)
  std::map<std::string, double> phase_per_generation;  // every phase, per worker
  // From result.json:
  double total_seconds = 0.0;              // wall seconds of the run, every stretch summed
  std::map<std::string, double> scores;    // the best ensemble's (fid, tvd, ... or the toy scores)
  std::set<std::string> unfinite_scores;   // scores written as null (not finite, as a toy's reverse_kl may be)

  std::string grid_label() const;  // "2x2"
};

// The phases counted as communication; all others are computation.
bool is_communication_phase(const std::string& phase);

// Reads `folder`. Returns std::nullopt when it holds no run (no
// config.yaml); a run without result.json is returned unfinished. Throws
// std::runtime_error (InputError for the records), naming the file, when a
// file is present but cannot be read as cellgan writes it.
std::optional<RunRecord> read_run_record(const std::string& folder);

// Sets each record's `values` to the keys whose values differ between the
// records (a key one lacks counts as ""), leaving out those every sweep
// sets itself (grid.rows, grid.cols, seed, output_dir), the layout (a
// column of its own) and the keys of how a run is run rather than what it
// trains (runtime.*, status.*, checkpoint.*, faults, data.path). Returns
// those keys. A number is written as the shortest text that reads back
// as it (2.0000000000000001e-4 as 0.0002). The keys `declared` (a sweep's
// --vary) are kept whether or not the records differ in them, so a column
// stays when only one of its values has finished.
std::vector<std::string> keep_varied_keys(std::vector<RunRecord>& records,
                                          const std::vector<std::string>& declared = {});

// Every run folder at most `depth` levels under `root` (root itself
// included), sorted by path.
std::vector<std::string> find_run_folders(const std::string& root, int depth = 3);

}  // namespace cellgan::sweep
