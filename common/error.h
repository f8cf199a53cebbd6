// Errors: the one error model of cellgan.
//
// - Bad input (configuration, data files, the command line) throws
//   InputError at the boundary. Its what() is one line that names the file,
//   the key or the rank, and what was expected. The command line prints it
//   and exits with kExitBadInput; nothing is written before that.
// - Expected runtime failures (I/O, a peer that has gone) are returned as
//   values by the functions that can meet them, with three exceptions that
//   still steer a worker: JobAborted (worker_exchange.h: the master ended
//   the run or fell silent; it carries the exit code) and Rehomed
//   (worker_comm.h: the master moved cells; the worker restarts its layout)
//   are thrown by WorkerComm's waits and caught in worker.cpp, and a
//   blocking receive past its deadline throws DeadlineExceeded
//   (communicator.h), which ends the rank as a runtime failure.
// - A failure every rank must know travels as a message (see
//   common/comm/protocol.h).
// - A broken contract, a caller passing what a function's header rules out
//   (a grid of 0 rows, a cell outside the grid), is a bug, not bad input:
//   it throws std::logic_error (usually std::invalid_argument), never
//   InputError. The command line reports it as an internal error and exits
//   with kExitInternal.
//
// - Which exceptions may cross a boundary: only InputError, RestartNeeded
//   and std::exception in general cross threads (as std::exception_ptr,
//   rethrown on the thread that owns the rank: the master's scoring thread,
//   the worker's training thread). Nothing crosses a rank as an exception:
//   a rank's ending travels as a message with its exit code.
// - One function maps an ending to its exit code: exit_code_of() below.
//   main() uses it for whatever reaches it, the master for what it tells
//   the workers, the worker for what it tells the master. The one
//   exception is a worker's communication thread: a message between ranks
//   that cannot be decoded (ByteReader's InputError) is a failure of the
//   run (1), not bad input (worker_comm.cpp).
// - Under `cellgan launch`, rank 0 also writes its exit code to the file
//   CELLGAN_EXIT_FILE names (launch_rank.h): the launcher's exit code is
//   that code, not mpirun's.
//
// Thread-safety: plain value types.
#pragma once

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>

namespace cellgan {

// Exit codes of the cellgan executable (docs/operations.md, "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // a runtime failure during the run
inline constexpr int kExitBadInput = 2;   // bad configuration, data or arguments
inline constexpr int kExitInternal = 70;  // a bug: a std::logic_error reached main (EX_SOFTWARE)
inline constexpr int kExitDiskFull = 74;  // no space left where the run writes (EX_IOERR): never restarted
inline constexpr int kExitRestart = 75;   // checkpointed: run the same command again with --resume auto (EX_TEMPFAIL)

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// The run stopped on purpose after a complete checkpoint (a signal, or a
// lost worker with no way to go on in place); the command line exits with
// kExitRestart, and `--resume auto` continues it.
class RestartNeeded : public std::runtime_error {
 public:
  explicit RestartNeeded(const std::string& message) : std::runtime_error(message) {}
};

// An errno that says the disk is full: no space left, or the quota used up.
inline bool is_disk_full(int err) { return err == ENOSPC || err == EDQUOT; }

// A write failed for want of space (is_disk_full). what() is one line
// naming the file and saying "no space left"; the command line exits with
// kExitDiskFull, which `cellgan launch` does not restart: a restart would
// meet the same full disk.
class DiskFull : public std::runtime_error {
 public:
  explicit DiskFull(const std::string& message) : std::runtime_error(message) {}
};

// The exit code of an ending by exception: InputError -> kExitBadInput,
// RestartNeeded -> kExitRestart, DiskFull or a std::system_error whose
// errno is_disk_full (std::filesystem's) -> kExitDiskFull,
// std::logic_error -> kExitInternal, any other -> kExitFailure.
inline int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const InputError*>(&e) != nullptr) return kExitBadInput;
  if (dynamic_cast<const RestartNeeded*>(&e) != nullptr) return kExitRestart;
  if (dynamic_cast<const DiskFull*>(&e) != nullptr) return kExitDiskFull;
  if (const auto* system = dynamic_cast<const std::system_error*>(&e);
      system != nullptr && is_disk_full(system->code().value()) &&
      (system->code().category() == std::generic_category() || system->code().category() == std::system_category()))
    return kExitDiskFull;
  if (dynamic_cast<const std::logic_error*>(&e) != nullptr) return kExitInternal;
  return kExitFailure;
}

}  // namespace cellgan
