// Ending worker processes by PID (see worker_processes.h).
#include "master/worker_processes.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "common/log.h"
#include "common/process_stats.h"

namespace cellgan {

bool is_killable(const IdentityMessage& id) { return id.pid > 0 && id.host == host_name() && id.pid != ::getpid(); }

namespace {

// No such process, or one that has died and is not yet reaped (a zombie:
// /proc/PID/stat's state, after the name in parentheses, is Z).
bool has_ended(const IdentityMessage& id) {
  if (::kill(static_cast<pid_t>(id.pid), 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(id.pid) + "/stat");
  const std::string line((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t name_end = line.rfind(')');
  return name_end != std::string::npos && name_end + 2 < line.size() && line[name_end + 2] == 'Z';
}

}  // namespace

std::string WorkerProcesses::kill(int worker) const {
  const IdentityMessage& id = ids_.at(static_cast<std::size_t>(worker - 1));
  if (!is_killable(id) || has_ended(id) || ::kill(static_cast<pid_t>(id.pid), SIGKILL) != 0) return "";
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

std::vector<int> WorkerProcesses::ended() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < ids_.size(); ++i)
    if (is_killable(ids_[i]) && has_ended(ids_[i])) out.push_back(static_cast<int>(i) + 1);
  return out;
}

std::vector<int> WorkerProcesses::on_this_host() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < ids_.size(); ++i)
    if (is_killable(ids_[i])) out.push_back(static_cast<int>(i) + 1);
  return out;
}

std::string WorkerProcesses::where(int worker) const {
  const IdentityMessage& id = ids_.at(static_cast<std::size_t>(worker - 1));
  return fmt::format("pid {} on {}", id.pid, id.host);
}

}  // namespace cellgan
