// What one attempt of a launched job came to, and what the launcher does
// next: the one place where the launcher's exit code is decided.
//
// The launcher's exit code is the run's truth, not mpirun's (which exits
// 0 under --enable-recovery whatever happened): it comes from the master's
// own code (written to the file CELLGAN_EXIT_FILE names, launch_rank.h)
// and from result.json.
//
//   finished: the master said 0 and result.json is there      -> done, 0
//   the user asked the launcher to stop                       -> done, the master's code (75 after a
//                                                                checkpoint); 75 when the run had not
//                                                                started (nothing lost); else 130
//   bad input (2), a bug (70) or a full disk (74)             -> done, that code: a restart cannot help
//   stopped to be resumed (75), a runtime failure (1),       -> restart with --resume auto, while
//   a master that ended with no code (killed, lost), a stall      restarts are left; else done with
//   (no progress by the deadline), 0 with no result.json          the master's code, or 1
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

namespace cellgan::launch {

struct AttemptEnd {
  int launcher_status = 0;         // mpirun's or srun's exit status (128 + N for signal N)
  std::optional<int> master_code;  // the master's exit code, when it wrote one
  bool result_written = false;     // result.json is in the run folder
  std::string stall;               // why the launcher ended a stalled job; "" when it did not
  bool stop_requested = false;     // the user asked the launcher to stop (Ctrl-C, SIGTERM)
  bool before_start = false;       // ...before the run wrote anything in this attempt: it was ended at once
};

struct Verdict {
  bool restart = false;
  int exit_code = 0;  // the launcher's code when it does not restart
  std::string cause;  // how the attempt ended, in words ("worker rank 2 ..." is not known here)
};

Verdict judge(const AttemptEnd& end);

}  // namespace cellgan::launch
