// One job at a time in a run folder: an exclusive flock(2) on
// DIR/run.lock (run_files.h), held by the master from the moment it writes
// the folder until it exits; the kernel releases it when the process ends,
// however it ends. The file holds "PID@HOST" of the holder, for messages.
//
// Thread-safety: a RunLock belongs to one thread; run_folder_holder is a
// free function of the file system.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace cellgan {

class RunLock {
 public:
  // Creates `dir` if needed and takes the lock. Returns null when another
  // process holds it; `holder` (if given) then gets its "PID@HOST".
  // Throws std::runtime_error when the file cannot be created.
  static std::unique_ptr<RunLock> take(const std::string& dir, std::string* holder = nullptr);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  explicit RunLock(int fd) : fd_(fd) {}
  int fd_;
};

// "PID@HOST" of the process holding `dir`'s lock, or std::nullopt when
// none does (or the folder has no run.lock). Creates nothing.
std::optional<std::string> run_folder_holder(const std::string& dir);

}  // namespace cellgan
