// Counted interrupts (see interrupts.h).
#include "app/interrupts.h"

#include <semaphore.h>

#include <csignal>
#include <cstring>
#include <thread>

namespace cellgan::app {

namespace {

// Constant-initialized: valid before any constructor has run.
std::atomic<int> g_interrupts{0};

extern "C" void count_interrupt(int) { g_interrupts.fetch_add(1); }

sem_t g_terminated;  // posted by the handler (sem_post is async-signal-safe)

extern "C" void note_termination(int) { sem_post(&g_terminated); }

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

void end_on_sigterm_after(std::chrono::milliseconds delay) {
  sem_init(&g_terminated, 0, 0);
  struct sigaction action {};
  action.sa_handler = note_termination;
  action.sa_flags = SA_RESTART;  // the ranks' system calls go on meanwhile
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  std::thread([delay] {
    while (sem_wait(&g_terminated) != 0) {
    }
    std::this_thread::sleep_for(delay);
    std::signal(SIGTERM, SIG_DFL);
    std::raise(SIGTERM);
  }).detach();
}

}  // namespace cellgan::app
