// Ending a session's processes (see process_session.h).
#include "launch/process_session.h"

#include <dirent.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace cellgan::launch {

namespace {

// Fields 3 (state) and 6 (session) of /proc/PID/stat, after the command's
// parenthesis (which may hold spaces).
bool read_stat(pid_t pid, char* state, pid_t* session) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(text.substr(close + 1));
  pid_t ppid = 0, pgrp = 0;
  rest >> *state >> ppid >> pgrp >> *session;
  return static_cast<bool>(rest);
}

void signal_all(const std::vector<pid_t>& pids, int signal) {
  for (const pid_t pid : pids) ::kill(pid, signal);
}

std::vector<pid_t> wait_until_gone(pid_t sid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<pid_t> left = session_members(sid);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = session_members(sid);
  }
  return left;
}

}  // namespace

std::vector<pid_t> session_members(pid_t sid) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0') continue;
    char state = '?';
    pid_t session = -1;
    if (read_stat(static_cast<pid_t>(pid), &state, &session) && session == sid && state != 'Z')
      found.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return found;
}

int end_session(pid_t sid, std::chrono::milliseconds grace) {
  std::vector<pid_t> left = session_members(sid);
  // A stopped process acts on SIGTERM only once it runs again.
  signal_all(left, SIGCONT);
  signal_all(left, SIGTERM);
  left = wait_until_gone(sid, grace);
  signal_all(left, SIGKILL);
  return static_cast<int>(wait_until_gone(sid, std::chrono::seconds(1)).size());
}

}  // namespace cellgan::launch
