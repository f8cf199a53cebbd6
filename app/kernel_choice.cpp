// The OpenBLAS kernels of every command (see kernel_choice.h).
#include "app/kernel_choice.h"

#include <elf.h>
#include <link.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "common/blas_kernels.h"
#include "common/log.h"
#include "common/math_kernels.h"

namespace cellgan::app {
namespace {

constexpr const char* kCoretype = "OPENBLAS_CORETYPE";
constexpr const char* kChosen = "CELLGAN_BLAS_CHOSEN";
// "PID" or "PID:held" (SIGUSR1 blocked for the exec): set by the process
// with that PID just before it re-executes itself; read and removed at start.
constexpr const char* kRestarted = "CELLGAN_BLAS_RESTARTED";

BlasPlan g_plan;
bool g_chosen_here = false;
bool g_holds_usr1 = false;

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

void put(const char* name, const std::optional<std::string>& value) {
  if (value && !value->empty()) ::setenv(name, value->c_str(), 1);
  else ::unsetenv(name);
}

// Up to the first "flags" line of /proc/cpuinfo.
std::set<std::string> this_cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string text, line;
  while (std::getline(in, line)) {
    text += line + "\n";
    if (line.rfind("flags", 0) == 0) break;
  }
  return cpu_flags_from_cpuinfo(text);
}

// Whether this process re-executed itself (the marker names its PID), and
// whether it blocked SIGUSR1 for it. The marker goes: children never see it.
bool take_restart_marker() {
  const std::optional<std::string> marker = variable(kRestarted);
  ::unsetenv(kRestarted);
  if (!marker) return false;
  const std::string pid = std::to_string(::getpid());
  if (*marker == pid + ":held") g_holds_usr1 = true;
  return *marker == pid || g_holds_usr1;
}

// True when the program was started through its loader (`ld.so cellgan ...`):
// /proc/self/exe is then the loader, which would not run cellgan again.
bool started_by_its_loader() {
  std::string interpreter;  // the main program's PT_INTERP (it comes first)
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          if (header.p_type == PT_INTERP)
            *static_cast<std::string*>(out) = reinterpret_cast<const char*>(info->dlpi_addr + header.p_vaddr);
        }
        return 1;
      },
      &interpreter);
  std::error_code error;
  return !interpreter.empty() && std::filesystem::equivalent(interpreter, "/proc/self/exe", error);
}

void restart(char** argv) {
  if (started_by_its_loader()) {
    g_plan = BlasPlan{};
    log::warn("blas: started through the loader, cellgan cannot re-execute itself: going on with {}", blas_kernels());
    return;
  }
  const std::optional<std::string> coretype = variable(kCoretype), chosen = variable(kChosen);
  put(kCoretype, g_plan.coretype);
  put(kChosen, g_plan.automatic ? std::optional<std::string>(g_plan.coretype) : std::nullopt);
  sigset_t usr1, before;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, &before);
  const bool block = sigismember(&before, SIGUSR1) == 0;
  ::setenv(kRestarted, fmt::format("{}{}", ::getpid(), block ? ":held" : "").c_str(), 1);
  ::execv("/proc/self/exe", argv);
  const int error = errno;
  if (block) sigprocmask(SIG_UNBLOCK, &usr1, nullptr);
  ::unsetenv(kRestarted);
  put(kCoretype, coretype);
  put(kChosen, chosen);
  g_plan = BlasPlan{};
  log::warn("blas: cannot re-execute /proc/self/exe to choose OpenBLAS's kernels ({}): going on with {}",
            std::strerror(error), blas_kernels());
}

}  // namespace

void choose_kernels_at_start(char** argv) {
  g_chosen_here = take_restart_marker();
  g_plan = plan_blas_kernels(this_cpu_flags(), {variable(kCoretype), variable(kChosen), g_chosen_here});
  if (g_plan.restart) restart(argv);
}

void release_held_stop_signal() {
  if (!g_holds_usr1) return;
  g_holds_usr1 = false;
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_UNBLOCK, &usr1, nullptr);
}

std::string kernel_choice_line() {
  if (!g_plan.automatic) return "";
  return fmt::format("blas: {} kernels, chosen from the CPU's features (export OPENBLAS_CORETYPE to pin them)",
                     blas_kernels());
}

bool kernels_chosen_here() { return g_chosen_here && g_plan.automatic; }

}  // namespace cellgan::app
