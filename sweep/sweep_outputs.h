// The outputs of a sweep, from the run folders under a root (the sweep's
// own runs/, or a SLURM job array's folder for --collect): sweep.csv,
// the plots (sweep_plots.h) and sweep.md, written into the output folder.
// Files are replaced whole (written beside, then renamed).
//
// Thread-safety: one caller at a time per output folder.
#pragma once

#include <string>
#include <vector>

#include "sweep/sweep_table.h"

namespace cellgan::sweep {

struct OutputsReport {
  int rows = 0;                          // finished runs in sweep.csv
  std::vector<std::string> unfinished;   // run folders without result.json
  std::vector<std::string> unreadable;   // "FOLDER: why"
  std::string plot_error;                // empty when the plots were drawn
  std::string counts;                    // sweep.md's "N finished runs, F failed, ..." (sweep_table.h)
};

// The file in a sweep's runs/ folder that names the keys its --vary
// options varied, one a line, so that --collect keeps their columns too.
inline constexpr const char* kVariedKeysFile = "varied-keys.txt";

// Adds `keys` to runs_root's kVariedKeysFile (those already there kept:
// a sweep run again with other --vary options shares the folder).
void record_varied_keys(const std::string& runs_root, const std::vector<std::string>& keys);

// Reads every run folder under `runs_root` (run_record.h), writes the
// outputs into `out`. `notes` gives sweep.md's title and the runs skipped
// or failed; the unfinished runs found are added to them, and so are the
// keys recorded varied in runs_root or runs_root/runs (record_varied_keys)
// to notes.varied_keys.
OutputsReport write_sweep_outputs(const std::string& runs_root, const std::string& out, SweepNotes notes);

}  // namespace cellgan::sweep
