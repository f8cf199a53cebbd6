// The plan of a sweep (cellgan sweep): one run per grid size, worker count
// and seed, in that order (grids outermost), each with its own run folder
// name. Runs whose worker count does not fit the grid are kept in the plan
// with the reason they are skipped.
//
// Errors: the parse_* functions throw InputError, one line naming the flag
// and what was expected.
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"

namespace cellgan::sweep {

struct GridSize {
  int rows = 1;
  int cols = 1;
  int cells() const { return rows * cols; }
  std::string label() const;  // "3x3"
};

struct PlannedRun {
  GridSize grid;
  int workers = 1;
  std::uint64_t seed = 1;
  std::string name;                  // the run folder's name: "g3x3-w2-s1"
  std::optional<std::string> skip;   // why the run is not run, if it is not
};

// "1x1,2x2,3x4": grids of 1..64 rows and columns, no repeats.
std::vector<GridSize> parse_grids(const std::string& text);
// "1,2,4": worker counts of 1..1024, no repeats.
std::vector<int> parse_workers(const std::string& text);

// Throws InputError for a --set setting of a key the sweep sets for each
// run itself (grid, grid.rows, grid.cols, seed, output_dir), which it would
// silently override.
void check_sweep_settings(const std::vector<std::string>& settings);

// Every (grid, W, seed) of the sweep; the seeds are config.seed,
// config.seed + 1, ... (`seeds` of them). `config` is the base
// configuration (its layout decides which worker counts fit a grid).
std::vector<PlannedRun> plan_sweep(const Config& config, const std::vector<GridSize>& grids,
                                   const std::vector<int>& workers, int seeds);

// The --set settings of one run: grid rows, grid columns, seed and, last,
// output_dir (the run folder `folder`).
std::vector<std::string> run_settings(const PlannedRun& run, const std::string& folder);

}  // namespace cellgan::sweep
