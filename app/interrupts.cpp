// Counted interrupts (see interrupts.h).
#include "app/interrupts.h"

#include <csignal>
#include <cstring>

namespace cellgan::app {

namespace {

// Constant-initialized: valid before any constructor has run.
std::atomic<int> g_interrupts{0};

extern "C" void count_interrupt(int) { g_interrupts.fetch_add(1); }

void count(Supervisor supervisor) {
  struct sigaction action {};
  action.sa_handler = count_interrupt;
  sigemptyset(&action.sa_mask);
  for (const int sig : {SIGINT, SIGTERM, SIGUSR1}) sigaction(sig, &action, nullptr);
  if (supervisor == Supervisor::kLaunch) sigaction(SIGHUP, &action, nullptr);
}

// Runs before any library's constructor: LibTorch's take a second or more
// on a loaded machine, and an interrupt then would otherwise be lost (a
// background job of a shell script starts with SIGINT ignored) or end the
// supervisor without a word. The commands that count interrupts count them
// from here on; launch_command() and sweep_command() read the count.
void count_interrupts_from_the_start(int argc, char** argv, char** /*envp*/) {
  if (argc < 2 || argv == nullptr || argv[1] == nullptr) return;
  if (std::strcmp(argv[1], "launch") == 0) count(Supervisor::kLaunch);
  if (std::strcmp(argv[1], "sweep") == 0) count(Supervisor::kSweep);
}

__attribute__((section(".preinit_array"), used)) void (*const g_preinit)(int, char**, char**) =
    count_interrupts_from_the_start;

}  // namespace

const std::atomic<int>& catch_interrupts(Supervisor supervisor) {
  count(supervisor);
  return g_interrupts;
}

}  // namespace cellgan::app
