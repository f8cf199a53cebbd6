// ExitUnlessDone: a deadline for an MPI call that has none of its own
// (MPI_Init, and the collective creation of a communicator, which waits for
// every member, a lost one too — under mpirun --enable-recovery for ever).
//
// Contract: construct it just before the call and let it go out of scope
// just after. If it is still alive after `limit`, a thread of its own logs
// one line through the logger (common/log.h), error level:
//   cellgan: stopped: MPI_Init has not returned after 30 s (a rank lost?):
//   run the same command again with --resume auto
// reports kExitRestart to the launcher (common/launch_rank.h) and ends the
// process with std::_Exit(kExitRestart).
//
// Why the process ends there, and not by an exception or a return: the
// thread that made the call is blocked inside MPI, and no MPI call can be
// cancelled, so nothing can reach that thread to unwind it; an orderly
// exit (std::exit, destructors) would run MPI_Finalize or other MPI calls
// that wait for the same lost rank. Nothing is lost by ending at once:
// whatever the run has done is in its newest complete checkpoint, and
// `--resume auto` (or cellgan launch, by itself) goes on from there. The
// line is flushed before the exit (the logger flushes every line).
//
// Thread-safety: construct and destroy on one thread; the watching thread
// is detached and shares only the done flag, under its own mutex.
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace cellgan {

class ExitUnlessDone {
 public:
  // `what` names the call in the line ("MPI_Init").
  ExitUnlessDone(std::string what, std::chrono::seconds limit);
  ~ExitUnlessDone();
  ExitUnlessDone(const ExitUnlessDone&) = delete;
  ExitUnlessDone& operator=(const ExitUnlessDone&) = delete;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace cellgan
