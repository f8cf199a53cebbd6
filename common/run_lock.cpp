// The run folder's lock (see run_lock.h).
#include "common/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/process_stats.h"
#include "common/run_files.h"

namespace cellgan {

namespace {

std::string lock_path(const std::string& dir) { return (std::filesystem::path(dir) / run_files::kLock).string(); }

std::string read_holder(int fd) {
  char text[256] = {};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string holder(text, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder.empty() ? "unknown" : holder;
}

}  // namespace

std::unique_ptr<RunLock> RunLock::take(const std::string& dir, std::string* holder) {
  std::filesystem::create_directories(dir);
  const std::string path = lock_path(dir);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (holder != nullptr) *holder = read_holder(fd);
    ::close(fd);
    return nullptr;
  }
  const std::string me = std::to_string(::getpid()) + "@" + host_name() + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) < 0) {
    // The lock holds without the text; only messages lose the holder's name.
  }
  return std::unique_ptr<RunLock>(new RunLock(fd));
}

RunLock::~RunLock() { ::close(fd_); }

std::optional<std::string> run_folder_holder(const std::string& dir) {
  const int fd = ::open(lock_path(dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> holder;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) holder = read_holder(fd);
  ::close(fd);  // releases the probe's shared lock
  return holder;
}

}  // namespace cellgan
