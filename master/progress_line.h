// The one-line progress bar the master redraws on a terminal
// (log::show_status_line), e.g.
//   [##########----------] 5/10 generations · best fid 31.2034 (cell 2) · ETA 1m05s
// A log or SLURM file gets one log line per generation instead (master.cpp).
//
// Thread-safety: pure functions, but stderr_is_terminal() looks at the
// process's file descriptors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cellgan {

struct Progress {
  std::int64_t done = 0;  // generations complete
  std::int64_t total = 0;
  std::string objective;  // the score's name
  std::optional<int> best_cell;
  std::optional<double> best_score;
  std::optional<double> eta_seconds;
};

// Whether the master's progress should be a bar: its stderr is a
// terminal, or (under mpirun, which hands rank 0 a pipe) the stderr of the
// process that started it is (mpirun's own, when rank 0 runs beside it).
// False under srun, in a batch job, or when stderr goes to a file.
bool stderr_is_terminal();

// The line, with a bar of `bar_width` characters (#: done, -: to do).
std::string progress_line(const Progress& p, int bar_width = 24);
// "42s", "3m07s", "2h05m"; "?" for a negative or non-finite time.
std::string short_duration(double seconds);

}  // namespace cellgan
