// The launcher's progress deadline (see progress_watch.h).
#include "launch/progress_watch.h"

#include <algorithm>
#include <filesystem>

#include "common/run_files.h"

namespace cellgan::launch {

ProgressWatch::ProgressWatch(std::chrono::milliseconds floor, Clock::time_point start)
    : floor_(floor), last_change_(start) {}

void ProgressWatch::observe(std::uint64_t mark, Clock::time_point now) {
  if (seen_ && mark == mark_) return;
  // The first mark counts as a change only when the files already hold
  // something new compared with nothing at all.
  if (seen_ || mark != 0) {
    longest_gap_ = std::max(longest_gap_, std::chrono::duration_cast<std::chrono::milliseconds>(now - last_change_));
    last_change_ = now;
  }
  mark_ = mark;
  seen_ = true;
}

std::chrono::milliseconds ProgressWatch::deadline() const { return std::max(floor_, longest_gap_ * kGapFactor); }

std::chrono::milliseconds ProgressWatch::silent_for(Clock::time_point now) const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - last_change_);
}

std::uint64_t progress_mark(const std::string& run_dir) {
  std::uint64_t mark = 0;
  for (const char* name : {run_files::kMetrics, run_files::kEvents}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(std::filesystem::path(run_dir) / name, ec);
    // Distinct weights, so that one file shrinking (a resume rewrites
    // metrics.jsonl) while the other grows is still a change.
    if (!ec) mark = mark * 1000003u + static_cast<std::uint64_t>(size) + 1;
  }
  std::error_code ec;
  const auto touched = std::filesystem::last_write_time(std::filesystem::path(run_dir) / run_files::kRunState, ec);
  if (!ec) mark = mark * 1000003u + static_cast<std::uint64_t>(touched.time_since_epoch().count()) + 1;
  return mark;
}

}  // namespace cellgan::launch
