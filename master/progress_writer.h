// What the master writes about a run as it goes (master.h), once the run
// folder exists: run.json (common/run_state.h) at the start, at each
// written generation and at the end; each written generation's progress
// (a log line, or on a terminal a progress bar redrawn in place; the live
// status board; the preview of its best cell, previews/gen-NNNNNN.png);
// and report.html (run_report.h). metrics.jsonl and events.log are the run
// directory's (run_directory.h).
//
// Endings: run.json that cannot be written is how a run folder that
// disappeared or stopped being writable is noticed: record() throws
// std::runtime_error then, or DiskFull for a full disk while the run goes
// on (an ending is still recorded in the room run.json holds). report.html
// not written is a warning, except for a full disk (DiskFull, thrown).
//
// Thread-safety: the master's control thread (or the thread that runs its
// finish()), one at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/config.h"
#include "common/layout_description.h"
#include "common/run_state.h"

namespace cellgan {

class RunDirectory;
class StatusBoard;

class ProgressWriter {
 public:
  using Clock = std::chrono::steady_clock;

  // For the run of `config` in `run`, shown on `board`, laid out as
  // `layout` says; the master started at `started`, going on after
  // generation `resumed_after` (0 for a new run). `progress_bar`: stderr
  // is a terminal.
  ProgressWriter(const Config& config, RunDirectory& run, StatusBoard& board, LayoutDescription layout,
                 Clock::time_point started, std::int64_t resumed_after, bool progress_bar);

  // run.json at the start: what the run is (`workers`, the master's
  // `device`), and, when `resuming`, the earlier stretches of the run, as
  // its run.json says (how the last one ended goes to events.log).
  void start(int workers, const std::string& device, bool resuming);
  // run.json with `status` ("running", or how the run ended).
  void record(const std::string& status, std::optional<int> exit_code = std::nullopt,
              const std::string& message = "");
  // Generation `generation` is written (metrics.jsonl): run.json, the
  // progress line, the board and the preview, at `now`.
  void generation_written(std::int64_t generation, Clock::time_point now);
  // report.html from what the run folder holds now.
  void report() const;
  // report.html at a complete checkpoint, at most every kReportEvery.
  void report_at_checkpoint(Clock::time_point now);
  // Ends the progress bar's line, if there is one.
  void end_progress() const;

  // The wall seconds of the run's earlier stretches and how many there were.
  double earlier_seconds() const { return earlier_seconds_; }
  int earlier_stretches() const { return state_.stretches - 1; }

  // With checkpoint.every 1, a report per generation would cost the shared
  // cores about 2% of the run.
  static constexpr std::chrono::seconds kReportEvery{30};

 private:
  void preview(std::int64_t generation, int best_cell);

  const Config& config_;
  RunDirectory& run_;
  StatusBoard& board_;
  const LayoutDescription layout_;
  const Clock::time_point started_;
  const std::int64_t resumed_after_;
  const bool progress_bar_;
  RunState state_;                 // run.json
  double earlier_seconds_ = 0.0;   // the wall time of the run's earlier stretches
  Clock::time_point report_written_{};  // when report.html was last written at a checkpoint
};

}  // namespace cellgan
