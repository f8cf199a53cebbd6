// Interrupts of the commands that supervise children (launch, sweep): the
// signals that ask them to stop are counted instead of ending the process,
// and the command's loop reads the count (the first asks for a clean stop,
// the second ends the child at once).
//
// `cellgan launch` and `cellgan sweep` count their signals from the start
// of the process, before any library's constructor runs (the executable's
// .preinit_array), so an interrupt while LibTorch loads is counted too.
//
// Thread-safety: catch_interrupts() once, on the main thread; the count is
// an atomic a signal handler raises.
#pragma once

#include <atomic>
#include <chrono>

namespace cellgan::app {

// launch counts SIGINT, SIGTERM, SIGUSR1 and SIGHUP (a closed terminal or
// ssh session stops a launched job cleanly); sweep the first three.
enum class Supervisor { kLaunch, kSweep };

// Starts counting for the command of argv[1] (launch or sweep; nothing for
// the others). Called from the executable's pre-initialiser (main.cpp),
// before any library's constructor: LibTorch's take a second or more on a
// loaded machine, and an interrupt then would otherwise be lost (a
// background job of a shell script starts with SIGINT ignored) or end the
// supervisor without a word.
void count_interrupts_from_the_start(int argc, char** argv);

// The count of `supervisor`'s signals (counted from the start of the
// process; again from now on, should a library have changed a handler).
const std::atomic<int>& catch_interrupts(Supervisor supervisor);

// A worker rank's SIGTERM ends it `delay` later (of SIGTERM, as before),
// not at once. mpirun ends every rank with SIGTERM when one of them dies:
// meanwhile the master, which names the worker processes of its host
// already gone when its own SIGTERM comes, sees the one that died alone.
// Call once, after MPI's start-up; a thread waits for the signal.
void end_on_sigterm_after(std::chrono::milliseconds delay);

}  // namespace cellgan::app
