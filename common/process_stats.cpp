// Reading /proc/self/status (see process_stats.h).
#include "common/process_stats.h"

#include <fstream>
#include <sstream>
#include <string>

namespace cellgan {

std::int64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      std::int64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

}  // namespace cellgan
