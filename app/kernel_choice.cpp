// The OpenBLAS kernels of every command (see kernel_choice.h).
#include "app/kernel_choice.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "common/blas_kernels.h"
#include "common/log.h"
#include "common/math_kernels.h"

namespace cellgan::app {
namespace {

constexpr const char* kCoretype = "OPENBLAS_CORETYPE";
constexpr const char* kChosen = "CELLGAN_BLAS_CHOSEN";
// "PID" or "PID:held" (the stop signals blocked for the exec): set by the
// process with that PID just before it re-executes itself; read and removed
// at start, so children never see it.
constexpr const char* kRestarted = "CELLGAN_BLAS_RESTARTED";

// Function statics, not globals: the executable's global constructors run
// after the pre-initialiser and would reset them. The flags are
// constant-initialised, which no constructor touches.
BlasPlan& plan() {
  static BlasPlan the_plan;
  return the_plan;
}
std::string& not_chosen_why() {
  static std::string why;
  return why;
}
bool g_chosen_here = false;
bool g_holds_signals = false;

void stop_signals(sigset_t* set) {
  sigemptyset(set);
  for (const int sig : {SIGINT, SIGTERM, SIGUSR1, SIGHUP}) sigaddset(set, sig);
}

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

void put(const char* name, const std::optional<std::string>& value) {
  if (value && !value->empty()) ::setenv(name, value->c_str(), 1);
  else ::unsetenv(name);
}

// /proc/cpuinfo up to its first "flags" line, read with plain system calls.
std::string cpuinfo_head() {
  std::string text;
  const int fd = ::open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<std::size_t>(got));
    const auto flags = text.find("\nflags");
    if (flags != std::string::npos && text.find('\n', flags + 1) != std::string::npos) break;
  }
  ::close(fd);
  return text;
}

// Whether this process re-executed itself (the marker names its PID), and
// whether it holds the stop signals for it.
bool take_restart_marker() {
  const std::optional<std::string> marker = variable(kRestarted);
  ::unsetenv(kRestarted);
  if (!marker) return false;
  const std::string pid = std::to_string(::getpid());
  if (*marker == pid + ":held") g_holds_signals = true;
  return *marker == pid || g_holds_signals;
}

bool same_file(const char* a, const char* b) {
  struct stat sa {}, sb {};
  return ::stat(a, &sa) == 0 && ::stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// True when the program was started through its loader (`ld.so cellgan ...`):
// /proc/self/exe is then the loader, which would not run cellgan again.
bool started_by_its_loader() {
  const char* interpreter = nullptr;  // the main program's PT_INTERP (it comes first)
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          if (header.p_type == PT_INTERP)
            *static_cast<const char**>(out) = reinterpret_cast<const char*>(info->dlpi_addr + header.p_vaddr);
        }
        return 1;
      },
      &interpreter);
  return interpreter != nullptr && same_file(interpreter, "/proc/self/exe");
}

void restart(char** argv) {
  if (started_by_its_loader()) {
    not_chosen_why() = "started through the loader, cellgan cannot re-execute itself";
    plan() = BlasPlan{};
    return;
  }
  const std::optional<std::string> coretype = variable(kCoretype), chosen = variable(kChosen);
  put(kCoretype, plan().coretype);
  put(kChosen, plan().automatic ? std::optional<std::string>(plan().coretype) : std::nullopt);
  sigset_t held, before;
  stop_signals(&held);
  sigprocmask(SIG_BLOCK, &held, &before);
  const bool block = sigismember(&before, SIGINT) == 0;
  ::setenv(kRestarted, (std::to_string(::getpid()) + (block ? ":held" : "")).c_str(), 1);
  ::execv("/proc/self/exe", argv);
  const int error = errno;
  if (block) sigprocmask(SIG_SETMASK, &before, nullptr);
  ::unsetenv(kRestarted);
  put(kCoretype, coretype);
  put(kChosen, chosen);
  plan() = BlasPlan{};
  not_chosen_why() = std::string("cannot re-execute /proc/self/exe (") + std::strerror(error) + ")";
}

}  // namespace

void choose_kernels_before_the_libraries(char** argv) {
  const bool restarted = take_restart_marker();
  BlasPlan& chosen = plan();
  chosen = plan_blas_kernels(cpu_flags_from_cpuinfo(cpuinfo_head()), {variable(kCoretype), variable(kChosen)});
  if (restarted) {
    g_chosen_here = chosen.automatic;
    return;
  }
  if (chosen.set_variables) restart(argv);
}

void release_held_signals() {
  if (!g_holds_signals) return;
  g_holds_signals = false;
  sigset_t held;
  stop_signals(&held);
  sigprocmask(SIG_UNBLOCK, &held, nullptr);
}

void warn_if_not_chosen() {
  if (!not_chosen_why().empty())
    log::warn("blas: {}: going on with {}", not_chosen_why(), blas_kernels());
}

std::string kernel_choice_line() {
  if (!plan().automatic) return "";
  return fmt::format("blas: {} kernels, chosen from the CPU's features (export OPENBLAS_CORETYPE to pin them)",
                     blas_kernels());
}

bool kernels_chosen_here() { return g_chosen_here; }

}  // namespace cellgan::app
