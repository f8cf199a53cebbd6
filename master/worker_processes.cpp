// Ending worker processes by PID (see worker_processes.h).
#include "master/worker_processes.h"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/log.h"
#include "common/process_stats.h"

namespace cellgan {

bool is_killable(const IdentityMessage& id) { return id.pid > 0 && id.host == host_name() && id.pid != ::getpid(); }

std::string WorkerProcesses::kill(int worker) const {
  const IdentityMessage& id = ids_.at(static_cast<std::size_t>(worker - 1));
  if (!is_killable(id) || ::kill(static_cast<pid_t>(id.pid), SIGKILL) != 0) return "";
  return fmt::format("killed worker rank {} (pid {} on {}), so that the job can end cleanly", worker, id.pid, id.host);
}

std::vector<int> WorkerProcesses::kill_remaining() const {
  std::vector<int> killed;
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    const IdentityMessage& id = ids_[i];
    if (!is_killable(id) || ::kill(static_cast<pid_t>(id.pid), 0) != 0) continue;  // not ours, or gone
    log::warn("worker rank {} (pid {}) is still there at the end of the job: killing it", i + 1, id.pid);
    ::kill(static_cast<pid_t>(id.pid), SIGKILL);
    killed.push_back(static_cast<int>(i) + 1);
  }
  return killed;
}

}  // namespace cellgan
