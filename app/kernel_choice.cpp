// The OpenBLAS kernels of every command (see kernel_choice.h).
#include "app/kernel_choice.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/blas_kernels.h"
#include "common/math_kernels.h"

namespace cellgan::app {
namespace {

constexpr const char* kCoretype = "OPENBLAS_CORETYPE";
constexpr const char* kChosen = "CELLGAN_BLAS_CHOSEN";

// A function's static, not a global: the executable's global constructors
// run after its pre-initialisers and would reset a global plan.
BlasPlan& plan() {
  static BlasPlan the_plan;
  return the_plan;
}
bool g_chosen_here = false;  // constant-initialised: no constructor resets it

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

// /proc/cpuinfo up to its first "flags" line, read with plain system calls
// (this runs before the C++ library's own initialisers).
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

// Runs before OpenBLAS's constructor (see kernel_choice.h).
void choose_kernels_before_the_libraries(int /*argc*/, char** /*argv*/, char** /*envp*/) {
  BlasPlan& chosen = plan();
  chosen = plan_blas_kernels(cpu_flags_from_cpuinfo(cpuinfo_head()), {variable(kCoretype), variable(kChosen)});
  if (!chosen.set_variables) return;
  if (chosen.coretype.empty()) {
    ::unsetenv(kCoretype);
    ::unsetenv(kChosen);
  } else {
    ::setenv(kCoretype, chosen.coretype.c_str(), 1);
    ::setenv(kChosen, chosen.coretype.c_str(), 1);
  }
  g_chosen_here = chosen.automatic;
}
__attribute__((section(".preinit_array"), used)) void (*const g_choose_kernels)(int, char**, char**) =
    choose_kernels_before_the_libraries;

}  // namespace

std::string kernel_choice_line() {
  if (!plan().automatic) return "";
  return fmt::format("blas: {} kernels, chosen from the CPU's features (export OPENBLAS_CORETYPE to pin them)",
                     blas_kernels());
}

bool kernels_chosen_here() { return g_chosen_here; }

}  // namespace cellgan::app
