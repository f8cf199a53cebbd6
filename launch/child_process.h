// A child process (mpirun, srun, gnuplot) started with posix_spawnp in a
// process group of its own, or a session of its own, so a Ctrl-C at the
// terminal reaches the parent alone and the parent decides what the child
// is sent. Its stdin is /dev/null; its stdout and stderr go to a log file
// (appended to) or, without one, to the parent's.
//
// Thread-safety: one thread owns a ChildProcess and makes every call (the
// parent polls wait_for() and sends signals between polls).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cellgan::launch {

struct ChildOptions {
  std::string log_file;  // "": the parent's stdout and stderr
  std::string cwd;       // "": the parent's folder
  // A session of its own (setsid) instead of a process group: every
  // process it starts stays in that session, even those that make a group
  // of their own (as mpirun's ranks do), so process_session.h can end
  // them all.
  bool new_session = false;
  std::vector<std::string> env;  // "NAME=VALUE" added to (or replacing in) the parent's environment
};

class ChildProcess {
 public:
  // Starts argv[0] (looked up on PATH) with `argv`. A failure to start is
  // kept: started() is false, and start_error() says why.
  ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options);
  // The sweep's form: output to `log_file`, in folder `cwd` when not empty.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_file, const std::string& cwd = "");
  ~ChildProcess();  // waits for a child still running (after killing it)
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& start_error() const { return error_; }
  pid_t pid() const { return pid_; }

  // Sends `signal` to the child (not its group). No effect once it has ended.
  void signal(int signal) const;
  // Waits at most `limit` for the child to end; its exit status then (128
  // + N when signal N ended it), std::nullopt while it still runs.
  std::optional<int> wait_for(std::chrono::milliseconds limit);
  // Waits until the child ends; its exit status as above.
  int wait();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string error_;
};

}  // namespace cellgan::launch
