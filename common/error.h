// Errors: the one error model of cellgan, as the code has it.
//
// Values, for what the code expects and acts on:
// - A deadline that passes (a peer may be gone: Open MPI never says) is a
//   value: receive_blocking() returns none, flush_sends() false
//   (common/comm/communicator.h). The worker's waits return what ended
//   them, the master's abort (or silence) or a rehoming, as an
//   Interruption (worker/worker_exchange.h); its training returns how it
//   ended, and worker.cpp turns that into its exit code. A lost worker is
//   the master's heartbeat monitor's finding, not an exception.
// - A failure every rank must know travels as a message (see
//   common/comm/protocol.h): a rank's ending travels with its exit code;
//   nothing crosses a rank as an exception.
//
// Exceptions, for input, bugs, and failures that end a rank:
// - Bad input (configuration, data files, the command line) throws
//   InputError at the boundary. Its what() is one line that names the file,
//   the key or the rank, and what was expected. The command line prints it
//   and exits with kExitBadInput; nothing is written before that.
// - A broken contract, a caller passing what a function's header rules out
//   (a grid of 0 rows, a cell outside the grid), is a bug, not bad input:
//   it throws std::logic_error (usually std::invalid_argument), never
//   InputError. The command line reports it as an internal error and exits
//   with kExitInternal.
// - A failure that ends the rank throws std::runtime_error naming the file,
//   cell or rank: a file that cannot be written or read (DiskFull when the
//   disk is full), an MPI call that fails, a training gone non-finite, the
//   last worker lost. Only a caller with a fallback catches it on the way
//   (a full disk: run.json rewritten in place); otherwise it reaches the
//   top of the rank (main(), Master::run(), the worker's train()), which
//   tells the other ranks and exits with exit_code_of() below.
// - The master's stop after a complete checkpoint (a signal, or a lost
//   worker with no way to go on in place) throws RestartNeeded from its
//   loop to main(), which exits with kExitRestart.
// - In the one-process job of the tests (in_process_job.h) a communicator
//   whose members never all arrive throws std::runtime_error; under MPI the
//   rank ends with kExitRestart instead (mpi_session.cpp, ExitUnlessDone).
//
// - Which exceptions may cross a boundary: only InputError, RestartNeeded
//   and std::exception in general cross threads (as std::exception_ptr,
//   rethrown on the thread that owns the rank: the master's scoring thread,
//   the worker's training thread).
// - One function maps an ending by exception to its exit code:
//   exit_code_of() below. main() uses it for whatever reaches it, the
//   master for what it tells the workers, the worker for what it tells the
//   master. The one exception is a worker's communication thread: a message
//   between ranks that cannot be decoded (ByteReader's InputError) is a
//   failure of the run (1), not bad input (worker_comm.cpp). The status
//   word each exit code gives a run is common/run_status.h's.
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
