// report.html: a run's page that outlives it. One self-contained HTML file
// in the run folder (master/pages/report.html, Chart.js and the images
// inlined, nothing fetched): what run.json and result.json say of the run
// (layout, grid, workers, status, generations, wall time, best ensemble and
// its scores), the curves of pages/curves.js from metrics.jsonl
// (run_history.h), samples.png, classes.png and the newest preview with
// their captions, and the last events of events.log.
//
// The master writes it at the end of a run (finished, stopped or failed)
// and at a complete checkpoint at most every 30 s; `cellgan report RUN_DIR` makes it for any
// run folder of any layout, finished or not.
//
// Thread-safety: free functions; the file is written atomically (never a
// half-written report), without fsync.
#pragma once

#include <string>

namespace cellgan {

// The page for the run folder `run_dir`. Throws InputError naming the
// folder when it is missing, not a folder, or holds neither run.json nor
// metrics.jsonl (not a run folder), or naming the file when a file in it
// is not what the run writes.
std::string run_report_html(const std::string& run_dir);

// Writes run_dir/report.html; returns its path. Throws as above, DiskFull
// (error.h) when there is no space left for it, or InputError naming the
// folder when it cannot be written there otherwise.
std::string write_run_report(const std::string& run_dir);

}  // namespace cellgan
