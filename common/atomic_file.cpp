// write_file_atomic (declared in common/image_files.h): writes bytes to a
// temporary file beside the target, fsyncs it, renames it over the target
// and fsyncs the folder, so readers see either the old file or the whole
// new one, never a partial file. And read_file, its reading twin.
//
// Thread-safety: safe to call from several threads, also for the same
// target (each call uses its own temporary name; the last rename wins).
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "common/error.h"
#include "common/image_files.h"

namespace cellgan {
namespace {

std::atomic<std::uint64_t> g_temp_counter{0};

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  if (is_disk_full(err)) throw_write_failure(path, err);
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(err));
}

// Writes all of `bytes` to `fd`, retrying on short writes and EINTR.
bool write_all(int fd, const std::string& bytes) {
  const char* data = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  return true;
}

}  // namespace

void throw_write_failure(const std::string& path, int err) {
  if (is_disk_full(err))
    throw DiskFull(path + ": no space left on the device" + (err == ENOSPC ? "" : std::string(" (") + std::strerror(err) + ")") +
                   ": free some space, then run the same command again (with --resume auto for a run)");
  throw std::runtime_error(path + ": cannot write: " + std::strerror(err));
}

void write_file_atomic(const std::string& path, const std::string& bytes, bool durable) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                           std::to_string(g_temp_counter.fetch_add(1));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, "cannot create temporary file", errno);
  if (!write_all(fd, bytes) || (durable && ::fsync(fd) != 0)) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    fail(path, "cannot write", err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "cannot close", err);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail(path, "cannot rename temporary file", err);
  }
  // Make the rename itself durable. Failure here is not fatal: the data is
  // complete and in place; only its survival of a power cut is in doubt.
  if (!durable) return;
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

}  // namespace cellgan
