// The plan of a sweep (cellgan sweep): one run per grid size, worker count,
// seed and value of each varied key (--vary KEY=V1,V2,...), crossed, in
// that order (grids outermost, the last --vary innermost), each with its
// own run folder name. Runs the layout refuses (a worker count that does
// not fit, a grid it cannot train, any value the configuration's checks
// refuse) are kept in the plan with the reason they are skipped.
//
// Errors: the parse_* functions throw InputError, one line naming the flag
// and what was expected.
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/config.h"

namespace cellgan::sweep {

struct GridSize {
  int rows = 1;
  int cols = 1;
  int cells() const { return rows * cols; }
  std::string label() const;  // "3x3"
};

// --vary KEY=V1,V2,...: a key of the configuration and its values (YAML).
struct Variation {
  std::string key;
  std::vector<std::string> values;
};

struct PlannedRun {
  GridSize grid;
  int workers = 1;
  std::uint64_t seed = 1;
  std::vector<std::pair<std::string, std::string>> varied;  // (key, value), in --vary order
  // The run folder's name: "g3x3-w2-s1", then "-" and each varied key's
  // last part and value ("-batch_size64"), characters other than letters,
  // digits, '.' and '_' as '_'.
  std::string name;
  std::optional<std::string> skip;   // why the run is not run, if it is not
  bool refused_by_config = false;    // skip is the configuration's refusal (not the layout's worker rule)
};

// "1x1,2x2,3x4": grids of 1..64 rows and columns, no repeats.
std::vector<GridSize> parse_grids(const std::string& text);
// "1,2,4": worker counts of 1..1024, no repeats.
std::vector<int> parse_workers(const std::string& text);

// "training.batch_size=32,64,128": a key and 1..100 values, no repeats.
Variation parse_vary(const std::string& text);

// Throws InputError for a --set setting or --vary key the sweep sets for
// each run itself (grid, grid.rows, grid.cols, seed, output_dir), which it
// would silently override, for a key both set and varied, and for a key
// varied twice.
void check_sweep_settings(const std::vector<std::string>& settings, const std::vector<Variation>& varies = {});

// The configuration of a run from the base file with `settings` applied
// (load_config), throwing InputError for what it refuses.
using ConfigLoader = std::function<Config(const std::vector<std::string>& settings)>;

// Every (grid, W, seed, varied values) of the sweep. `grids` empty: the
// configuration's grid. `workers` empty: each run's natural worker count
// (one per cell, one per class; InputError for data_parallel, which has
// none). The seeds are config.seed, config.seed + 1, ... (`seeds` of
// them). `config` is the base configuration with the sweep's --set
// settings; `load` (when given) loads each run's configuration with its
// own settings as well, and a run it refuses is skipped with its words;
// but a --vary value it refuses in every run that has it (a typo, not a
// combination) is an InputError.
std::vector<PlannedRun> plan_sweep(const Config& config, const std::vector<GridSize>& grids,
                                   const std::vector<int>& workers, int seeds, const std::vector<Variation>& varies = {},
                                   const ConfigLoader& load = {});

// Why the finished or interrupted run in `folder` (its config.yaml) is not
// the run `run` of this sweep, if it is not: the first key whose value
// differs from what `load` gives it ("training.generations: 3 in the run,
// 5 in this sweep"). output_dir and how a run is run (runtime.*, status.*,
// checkpoint.*, faults) may differ, and training.generations while the
// run is unfinished (it resumes to the new count). No config.yaml: none.
std::optional<std::string> made_otherwise(const PlannedRun& run, const std::string& folder, const ConfigLoader& load);

// The --set settings of one run: grid rows, grid columns, seed, the varied
// keys and, last, output_dir (the run folder `folder`).
std::vector<std::string> run_settings(const PlannedRun& run, const std::string& folder);

}  // namespace cellgan::sweep
