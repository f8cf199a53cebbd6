// Reading /proc/self/status (see process_stats.h).
#include "common/process_stats.h"

#include <malloc.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace cellgan {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}


namespace {

// The value of a "Key:   123 kB" line of /proc/self/status, in bytes.
bool read_kib_field(const std::string& line, const char* key, std::int64_t& bytes) {
  const std::string prefix = std::string(key) + ":";
  if (line.rfind(prefix, 0) != 0) return false;
  std::istringstream fields(line.substr(prefix.size()));
  std::int64_t kib = 0;
  fields >> kib;
  bytes = kib * 1024;
  return true;
}

}  // namespace

std::int64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  std::int64_t bytes = 0;
  while (std::getline(in, line))
    if (read_kib_field(line, "VmHWM", bytes)) return bytes;
  return 0;
}

ResidentSet current_rss() {
  std::ifstream in("/proc/self/status");
  std::string line;
  ResidentSet rss;
  while (std::getline(in, line)) {
    read_kib_field(line, "RssAnon", rss.anonymous) || read_kib_field(line, "RssFile", rss.file) ||
        read_kib_field(line, "RssShmem", rss.shared);
  }
  const struct mallinfo2 heap = mallinfo2();
  rss.heap_in_use = static_cast<std::int64_t>(heap.uordblks + heap.hblkhd);
  return rss;
}

void release_free_memory() { malloc_trim(0); }

}  // namespace cellgan
