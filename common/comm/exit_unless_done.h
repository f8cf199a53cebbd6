// PRIVATE to cellgan_comm: a deadline for an MPI call that has none of its
// own (MPI_Init, and the collective creation of a communicator, which waits
// for every member, a lost one too — under mpirun --enable-recovery for
// ever). If the guard is still alive after `limit`, the process says which
// call (its last line, through the logger), reports exit 75 to the launcher
// (launch_rank.h) and exits with it: whatever was done is in the newest
// complete checkpoint, and `--resume auto` (or cellgan launch, by itself)
// goes on from there. It ends the process from its own detached thread with
// std::_Exit because nothing else can: the blocked MPI call cannot be
// interrupted, and returning or exit() would run destructors that wait on
// MPI too.
//
// Thread-safety: a guard belongs to the thread that makes the call it
// guards; its watching thread shares only its own state.
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace cellgan {

// Far beyond a healthy communicator creation (about 1 ms; it follows a
// handshake that has just shown every member alive). docs/operations.md,
// "Launching", states it.
inline constexpr std::chrono::seconds kCreateLimit{10};

class ExitUnlessDone {
 public:
  ExitUnlessDone(std::string what, std::chrono::seconds limit);
  ~ExitUnlessDone();
  ExitUnlessDone(const ExitUnlessDone&) = delete;
  ExitUnlessDone& operator=(const ExitUnlessDone&) = delete;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace cellgan
