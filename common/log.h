// The fmt-based logger.
//
// Every line carries the time since start, the level, the MPI rank (or
// "-" before it is known) and a short thread name:
//   [  12.345s] INFO  r1/train  generation 3 done
// Lines go to stderr; library code never writes to std::cout.
//
// Thread-safety: all functions may be called from any thread; a line is
// written whole under one mutex.
#pragma once

#include <fmt/core.h>

#include <string>
#include <string_view>

namespace cellgan::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Set once per process, early (the rank is known after MPI starts).
void set_rank(int rank);
// The rank in the calling thread's lines, for ranks that are threads of one
// process (the one-process job of the tests); it overrides set_rank's.
void set_thread_rank(int rank);
void set_level(Level level);
// Names the calling thread in its log lines ("main", "comm", "train"...).
void set_thread_name(std::string_view name);
// Parses "debug", "info", "warn" or "error"; throws InputError otherwise.
Level parse_level(std::string_view text);

// An info line written once, just before the first line this process
// writes (if it writes any, and info lines are enabled): a fact that matters
// to a command that says something, and would be noise on a refusal.
void set_preamble(std::string line);

bool enabled(Level level);
void write(Level level, std::string_view message);

// A process's last words, written as they are (no time, level or rank:
// "cellgan: stopped: ..."), whole, after erasing a status line, and
// flushed: for a process about to end without returning (std::_Exit).
void last_line(std::string_view line);

// A status line (a progress bar) kept at the bottom of a terminal: drawn
// in place with \r; write() erases it, writes its line and draws it again.
// Only for a stderr that is a terminal (the caller checks, isatty).
void show_status_line(std::string_view line);
// Ends the status line where it is (a newline) and stops redrawing it.
void end_status_line();

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kDebug)) write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kInfo)) write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kWarn)) write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kError)) write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace cellgan::log
