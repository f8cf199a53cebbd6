#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <utility>

#include "common/error.h"
#include "common/thread_annotations.h"

namespace cellgan::log {
namespace {

Mutex g_mutex;
std::atomic<int> g_rank{-1};
std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
const auto g_start = std::chrono::steady_clock::now();
thread_local std::string t_thread_name = "main";
thread_local int t_rank = -1;  // set_thread_rank(); -1: the process's rank
std::string g_status_line GUARDED_BY(g_mutex);  // show_status_line()
std::string g_preamble GUARDED_BY(g_mutex);     // set_preamble()

const char* level_name(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO ";
    case Level::kWarn: return "WARN ";
    case Level::kError: return "ERROR";
  }
  return "?";
}

}  // namespace

void set_rank(int rank) { g_rank = rank; }
void set_thread_rank(int rank) { t_rank = rank; }
void set_level(Level level) { g_level = static_cast<int>(level); }
void set_thread_name(std::string_view name) { t_thread_name = std::string(name); }

void set_preamble(std::string line) {
  MutexLock lock(g_mutex);
  g_preamble = std::move(line);
}

Level parse_level(std::string_view text) {
  if (text == "debug") return Level::kDebug;
  if (text == "info") return Level::kInfo;
  if (text == "warn") return Level::kWarn;
  if (text == "error") return Level::kError;
  throw InputError(fmt::format("log level '{}': expected one of debug, info, warn, error", text));
}

bool enabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

void write(Level level, std::string_view message) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
  const int rank = t_rank >= 0 ? t_rank : g_rank.load();
  const std::string who = rank < 0 ? std::string("-") : fmt::format("r{}", rank);
  const auto format = [&](Level l, std::string_view text) {
    return fmt::format("[{:9.3f}s] {} {}/{} {}\n", seconds, level_name(l), who, t_thread_name, text);
  };
  const std::string line = format(level, message);
  MutexLock lock(g_mutex);
  if (!g_status_line.empty()) std::fputs("\r\033[K", stderr);  // erase it, to draw it again below
  if (!g_preamble.empty() && enabled(Level::kInfo)) std::fputs(format(Level::kInfo, g_preamble).c_str(), stderr);
  g_preamble.clear();
  std::fputs(line.c_str(), stderr);
  if (!g_status_line.empty()) std::fputs(g_status_line.c_str(), stderr);
  std::fflush(stderr);
}

void last_line(std::string_view line) {
  MutexLock lock(g_mutex);
  if (!g_status_line.empty()) std::fputs("\r\033[K", stderr);
  g_status_line.clear();
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputs("\n", stderr);
  std::fflush(nullptr);
}

void show_status_line(std::string_view line) {
  MutexLock lock(g_mutex);
  g_status_line.assign(line.data(), line.size());
  std::fputs("\r\033[K", stderr);
  std::fputs(g_status_line.c_str(), stderr);
  std::fflush(stderr);
}

void end_status_line() {
  MutexLock lock(g_mutex);
  if (g_status_line.empty()) return;
  g_status_line.clear();
  std::fputs("\n", stderr);
  std::fflush(stderr);
}

}  // namespace cellgan::log
