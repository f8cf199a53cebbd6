// The table of a sweep: one row per finished run, with the speed-up and
// efficiency against W = 1 of the same layout, grid, seed and varied
// values, written as sweep.csv and summarised with the plots in sweep.md.
//
// sweep.csv columns, in order:
//   grid, rows, cols, cells, workers, seed, generations,
//   s_per_generation   wall seconds per generation (generation 1 left out)
//   total_s            wall seconds of the run, every stretch summed
//   speedup            s_per_generation at W = 1 / s_per_generation (empty
//                      without a W = 1 run of the same grid and seed)
//   efficiency         speedup / W
//   compute_s, comm_s  seconds per generation per worker of computation
//                      and of communication (gather + idle)
//   comm_share         comm_s / (compute_s + comm_s)
//   layout             coevolution, data_parallel or per_class
//   then each varied key (--vary), its value in the run's config.yaml
//   overlaps           how many other runs of the table ran at the same
//                      time as this one (run.json's spans): its timings
//                      are not to be trusted unless 0
//   then the final scores, one column each, in name order (fid, is, tvd
//   for images; the toy scores for toy data), empty where a run has none.
//
// Thread-safety: pure functions, and file writes to the caller's folder.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sweep/run_record.h"

namespace cellgan::sweep {

struct SweepRow {
  RunRecord run;
  std::optional<double> speedup;
  std::optional<double> efficiency;
  double comm_share = 0.0;
  std::vector<std::string> overlapped;  // the folder names of the runs that ran at the same time
};

// The finished runs, sorted by cells, grid, W, seed and varied values, with
// their speed-ups and overlaps.
std::vector<SweepRow> sweep_rows(const std::vector<RunRecord>& runs);
// The varied keys of the rows (RunRecord::values), in name order.
std::vector<std::string> varied_keys(const std::vector<SweepRow>& rows);
// The score names of the rows, in name order.
std::vector<std::string> score_names(const std::vector<SweepRow>& rows);
// The score the plots and the summary show: fid for images, modes_covered
// for toy data (ring, grid); another score when a run has not those.
std::string main_score(const std::vector<SweepRow>& rows);

std::string csv_text(const std::vector<SweepRow>& rows);

// What sweep.md tells besides the rows: the runs skipped or failed, and
// the plots drawn (file names, in the same folder).
struct SweepNotes {
  std::string title;                      // the command or the collected folder
  std::vector<std::string> skipped;       // "g1x1-w2-s1: 2 workers for 1 cell: ..."
  std::vector<std::string> failed;        // "g2x2-w2-s1: exit 1 (logs/g2x2-w2-s1.log)"
  std::vector<std::string> unfinished;    // interrupted, to be resumed
  std::vector<std::pair<std::string, std::string>> plots;  // file, caption
  std::vector<std::string> varied_keys;   // the sweep's --vary keys: columns however many values finished
};
// "3 finished runs, 1 failed, 2 skipped": what sweep.md says and the
// terminal prints, from the same numbers.
std::string counts_text(const std::vector<SweepRow>& rows, const SweepNotes& notes);
std::string markdown_text(const std::vector<SweepRow>& rows, const SweepNotes& notes);

}  // namespace cellgan::sweep
