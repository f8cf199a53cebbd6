// When a job counts as stalled: the launcher's progress deadline.
//
// A job shows progress by writing its run folder: a line in metrics.jsonl
// (a generation written) or in events.log (start-up steps, faults, stops,
// checkpoints), or run.json rewritten or touched (the master does every
// 10 s while it scores the final ensembles). progress_mark() combines the
// files' sizes and run.json's time; any change of it is progress. The deadline is max(floor, 4 x the longest gap between
// two changes seen so far in this attempt), so a run whose generations
// take minutes is not ended for being slow, while a job that hangs in its
// first second (MPI_Init) is ended after `floor`.
//
// Thread-safety: a ProgressWatch belongs to one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace cellgan::launch {

class ProgressWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kGapFactor = 4;

  ProgressWatch(std::chrono::milliseconds floor, Clock::time_point start);

  // The mark seen at `now`; a mark unlike the last one is progress.
  void observe(std::uint64_t mark, Clock::time_point now);
  std::chrono::milliseconds deadline() const;
  // How long nothing has changed, at `now`.
  std::chrono::milliseconds silent_for(Clock::time_point now) const;
  bool stalled(Clock::time_point now) const { return silent_for(now) > deadline(); }

 private:
  std::chrono::milliseconds floor_;
  std::chrono::milliseconds longest_gap_{0};
  Clock::time_point last_change_;
  std::uint64_t mark_ = 0;
  bool seen_ = false;
};

// The sizes of `run_dir`'s metrics.jsonl and events.log and the time of
// its run.json, combined; 0 when none exists.
std::uint64_t progress_mark(const std::string& run_dir);

}  // namespace cellgan::launch
