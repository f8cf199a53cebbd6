// The progress bar's line (see progress_line.h).
#include "master/progress_line.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace cellgan {

bool stderr_is_terminal() {
  if (::isatty(STDERR_FILENO) == 1) return true;
  const int parent = ::open(fmt::format("/proc/{}/fd/2", ::getppid()).c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (parent < 0) return false;
  const bool tty = ::isatty(parent) == 1;
  ::close(parent);
  return tty;
}

std::string short_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<std::int64_t>(std::llround(seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}h{:02d}m", s / 3600, (s / 60) % 60);
}

std::string progress_line(const Progress& p, int bar_width) {
  const double fraction =
      p.total > 0 ? std::clamp(static_cast<double>(p.done) / static_cast<double>(p.total), 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(std::floor(fraction * bar_width));
  std::string line = "[" + std::string(static_cast<std::size_t>(filled), '#') +
                     std::string(static_cast<std::size_t>(std::max(bar_width - filled, 0)), '-') + "] ";
  line += fmt::format("{}/{} generations", p.done, p.total);
  if (p.best_score && std::isfinite(*p.best_score)) {
    line += fmt::format(" · best {} {:.4f}", p.objective, *p.best_score);
    if (p.best_cell) line += fmt::format(" (cell {})", *p.best_cell);
  }
  line += " · ETA " + (p.eta_seconds ? short_duration(*p.eta_seconds) : std::string("?"));
  return line;
}

}  // namespace cellgan
