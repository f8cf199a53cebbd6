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

}  // namespace

void count_interrupts_from_the_start(int argc, char** argv) {
  if (argc < 2 || argv == nullptr || argv[1] == nullptr) return;
  if (std::strcmp(argv[1], "launch") == 0) count(Supervisor::kLaunch);
  if (std::strcmp(argv[1], "sweep") == 0) count(Supervisor::kSweep);
}

const std::atomic<int>& catch_interrupts(Supervisor supervisor) {
  count(supervisor);
  return g_interrupts;
}

}  // namespace cellgan::app
