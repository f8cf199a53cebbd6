// The processes of one session (setsid), found in /proc, and ending them
// all: a job launched in a session of its own (child_process.h) is ended
// as a whole, its ranks included, even a rank that made a process group
// of its own (mpirun's do) or one that is stopped (SIGSTOP).
//
// Thread-safety: free functions; they only read /proc and send signals.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace cellgan::launch {

// The live processes (zombies left out) whose session is `sid`.
std::vector<pid_t> session_members(pid_t sid);

// Ends every process of session `sid`: SIGCONT and SIGTERM to each, then,
// after `grace` (or as soon as none is left), SIGKILL to any still there.
// Returns how many were still there after SIGKILL and another second.
int end_session(pid_t sid, std::chrono::milliseconds grace);

}  // namespace cellgan::launch
