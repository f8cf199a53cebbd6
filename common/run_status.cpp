// The status word of an exit code (see run_status.h).
#include "common/run_status.h"

namespace cellgan {

std::string status_of(int exit_code) {
  if (exit_code == kExitOk) return "finished";
  if (exit_code == kExitRestart) return "stopped";
  return "failed";
}

}  // namespace cellgan
