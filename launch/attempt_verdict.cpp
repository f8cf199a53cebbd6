// The launcher's exit code and restart rule (see attempt_verdict.h).
#include "launch/attempt_verdict.h"

#include <fmt/core.h>

#include "common/error.h"

namespace cellgan::launch {

namespace {

std::string how_the_launcher_ended(int status) {
  if (status > 128) return fmt::format("mpirun/srun ended on signal {}", status - 128);
  return fmt::format("mpirun/srun exited {}", status);
}

}  // namespace

Verdict judge(const AttemptEnd& end) {
  const std::optional<int> code = end.master_code;
  if (code == kExitOk && end.result_written) return {false, kExitOk, "finished"};
  if (end.stop_requested) {
    if (code) return {false, *code, fmt::format("stopped on request (exit {})", *code)};
    if (end.before_start)
      return {false, kExitRestart, "stopped on request before the run started: nothing was lost; run the same "
                                   "command again (with --resume auto after a restart)"};
    return {false, 130, "stopped on request before the master could checkpoint"};
  }
  if (!end.stall.empty()) return {true, kExitFailure, end.stall};
  if (code == kExitBadInput) return {false, kExitBadInput, "bad input (exit 2)"};
  if (code == kExitInternal) return {false, kExitInternal, "an internal error (exit 70)"};
  if (code == kExitDiskFull)
    return {false, kExitDiskFull, "the disk is full (exit 74): not restarted, a restart would meet the same full disk"};
  if (code == kExitRestart) return {true, kExitRestart, "the run stopped, to be resumed (exit 75)"};
  if (code == kExitOk) return {true, kExitFailure, "the master exited 0 but wrote no result.json"};
  if (code) return {true, *code, fmt::format("the run failed (exit {})", *code)};
  return {true, kExitFailure,
          fmt::format("the master ended without an exit code ({})", how_the_launcher_ended(end.launcher_status))};
}

}  // namespace cellgan::launch
