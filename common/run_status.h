// How a run ended, named: the one map from a process's exit code
// (common/error.h) to the status word that run.json records (run_state.h)
// and that `cellgan launch` and the sweep report.
//
//   kExitOk       -> finished
//   kExitRestart  -> stopped (checkpointed: run again with --resume auto)
//   anything else -> failed
//
// Thread-safety: pure functions.
#pragma once

namespace cellgan {

enum class RunStatus { kRunning, kFinished, kStopped, kFailed };

// The status of a run whose process ended with `exit_code`.
RunStatus status_of(int exit_code);
// "running", "finished", "stopped" or "failed".
const char* status_word(RunStatus status);

}  // namespace cellgan
