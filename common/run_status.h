// The exit codes of cellgan, named once, and the status word each leaves
// in run.json (common/run_state.h). Every process of a run (`cellgan
// train`, each rank, `cellgan launch`, `cellgan sweep` reading them) ends
// with, or compares against, these names; no exit code is written as a
// number anywhere else (tests/style/exit_codes.py checks it).
//
//   RunStatus      code  run.json status  meaning
//   kFinished         0  finished         the run is done, result.json written
//   kFailed           1  failed           a runtime failure during the run
//   kBadInput         2  failed           bad configuration, data or arguments
//   kInternal        70  failed           a bug: a std::logic_error reached main (EX_SOFTWARE)
//   kDiskFull        74  failed           no space left where the run writes (EX_IOERR): never restarted
//   kStopped         75  stopped          checkpointed: run the same command again with --resume auto
//                                         (EX_TEMPFAIL)
//   kInterrupted    130  failed           `cellgan launch` stopped on request before the master could
//                                         checkpoint (128 + SIGINT)
//
// "running" is the status of a run whose master lives (no exit code yet).
//
// Thread-safety: constants and a pure function.
#pragma once

#include <string>

namespace cellgan {

enum class RunStatus : int {
  kFinished = 0,
  kFailed = 1,
  kBadInput = 2,
  kInternal = 70,
  kDiskFull = 74,
  kStopped = 75,
  kInterrupted = 130,
};

constexpr int code_of(RunStatus status) { return static_cast<int>(status); }

// The names the code uses for them.
inline constexpr int kExitOk = code_of(RunStatus::kFinished);
inline constexpr int kExitFailure = code_of(RunStatus::kFailed);
inline constexpr int kExitBadInput = code_of(RunStatus::kBadInput);
inline constexpr int kExitInternal = code_of(RunStatus::kInternal);
inline constexpr int kExitDiskFull = code_of(RunStatus::kDiskFull);
inline constexpr int kExitRestart = code_of(RunStatus::kStopped);
inline constexpr int kExitInterrupted = code_of(RunStatus::kInterrupted);

// The run.json status of a run that ended with `exit_code`: "finished"
// (kExitOk), "stopped" (kExitRestart) or "failed" (any other code).
std::string status_of(int exit_code);

}  // namespace cellgan
