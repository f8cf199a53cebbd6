// The exit code to status map (see run_status.h).
#include "common/run_status.h"

#include "common/error.h"

namespace cellgan {

RunStatus status_of(int exit_code) {
  if (exit_code == kExitOk) return RunStatus::kFinished;
  if (exit_code == kExitRestart) return RunStatus::kStopped;
  return RunStatus::kFailed;
}

const char* status_word(RunStatus status) {
  switch (status) {
    case RunStatus::kRunning: return "running";
    case RunStatus::kFinished: return "finished";
    case RunStatus::kStopped: return "stopped";
    case RunStatus::kFailed: return "failed";
  }
  return "failed";
}

}  // namespace cellgan
