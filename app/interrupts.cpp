// Counted interrupts (see interrupts.h).
#include "app/interrupts.h"

#include <csignal>

namespace cellgan::app {

namespace {

std::atomic<int> g_interrupts{0};

extern "C" void count_interrupt(int) { g_interrupts.fetch_add(1); }

}  // namespace

const std::atomic<int>& catch_interrupts(std::initializer_list<int> signals) {
  struct sigaction action {};
  action.sa_handler = count_interrupt;
  sigemptyset(&action.sa_mask);
  for (const int sig : signals) sigaction(sig, &action, nullptr);
  return g_interrupts;
}

}  // namespace cellgan::app
