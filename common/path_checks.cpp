// Checks of output paths (see path_checks.h).
#include "common/path_checks.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace cellgan {

namespace fs = std::filesystem;

namespace {

// "" if `dir`, which exists, is a folder this process may write into.
// access(2) alone does not answer it: root passes access() for any folder,
// and a folder of a file system that takes no new entries (/proc, /sys)
// passes it too. So a file is made in it: an unnamed one (O_TMPFILE), which
// leaves the folder as it was, its times included (a refused command
// changes nothing in a run folder); where the file system has no unnamed
// files, an empty folder made and removed at once, and the folder's times
// put back.
std::string why_not_writable_folder(const fs::path& dir, const std::string& shown) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return fmt::format("'{}' is a file, not a folder", shown);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return fmt::format("the folder '{}' is not writable", shown);
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
    return "";
  }
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    return fmt::format("nothing can be made in the folder '{}' ({})", shown, std::strerror(errno));
  struct stat before {};
  const bool timed = ::stat(dir.c_str(), &before) == 0;
  std::string probe = (dir / ".cellgan-write-check-XXXXXX").string();
  if (::mkdtemp(probe.data()) == nullptr)
    return fmt::format("nothing can be made in the folder '{}' ({})", shown, std::strerror(errno));
  ::rmdir(probe.c_str());
  if (timed) {
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    ::utimensat(AT_FDCWD, dir.c_str(), times, 0);
  }
  return "";
}

// The path as the user would recognise it ("." for the current folder).
std::string shown(const fs::path& p) { return p.empty() ? std::string(".") : p.string(); }

bool is_dangling_link(const fs::path& p) {
  std::error_code ec;
  return fs::is_symlink(fs::symlink_status(p, ec)) && !fs::exists(p, ec);
}

}  // namespace

std::string why_no_input_file(const std::string& path) {
  if (path.empty()) return "is empty: expected a file name";
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return is_dangling_link(path) ? "is a symbolic link to nothing" : "does not exist";
  if (ec) return "cannot be read: " + ec.message();
  if (fs::is_directory(status)) return "is a folder";
  if (!fs::is_regular_file(status)) return "is not a regular file (a device, a pipe or a socket)";
  if (::access(path.c_str(), R_OK) != 0) return "cannot be read: permission denied";
  return "";
}

std::string why_no_directory(const std::string& dir) {
  if (dir.empty()) return "is empty: expected a folder name";
  const fs::path path(dir);
  std::error_code ec;
  if (is_dangling_link(path)) return "is a symbolic link to nothing";
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec)) return "exists and is not a folder";
    const std::string why = why_not_writable_folder(path, dir);
    return why.empty() ? "" : "cannot be written: " + why;
  }
  // The nearest ancestor that exists must be a folder we may write into.
  fs::path ancestor = path.parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec)) {
    if (is_dangling_link(ancestor))
      return fmt::format("cannot be created: '{}' is a symbolic link to nothing", ancestor.string());
    if (ancestor == ancestor.parent_path()) break;
    ancestor = ancestor.parent_path();
  }
  const std::string why = why_not_writable_folder(ancestor.empty() ? fs::path(".") : ancestor, shown(ancestor));
  return why.empty() ? "" : "cannot be created: " + why;
}

std::string why_no_file(const std::string& path) {
  if (path.empty()) return "is empty: expected a file name";
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) return "is a folder: expected a file name";
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) return "exists and is not a regular file";
  if (!p.has_filename()) return "ends in '/': expected a file name";
  const fs::path folder = p.parent_path();
  if (!folder.empty() && !fs::exists(folder, ec))
    return fmt::format("cannot be written: the folder '{}' does not exist", folder.string());
  const std::string why = why_not_writable_folder(folder.empty() ? fs::path(".") : folder, shown(folder));
  return why.empty() ? "" : "cannot be written: " + why;
}

}  // namespace cellgan
