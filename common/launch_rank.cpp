// The launcher's rank of this process (see launch_rank.h).
#include "common/launch_rank.h"

#include <signal.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <initializer_list>
#include <sstream>

#include "common/process_stats.h"

namespace cellgan {

int launch_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    errno = 0;
    const long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && errno == 0 && rank >= 0 && rank <= INT_MAX) return static_cast<int>(rank);
  }
  return 0;
}

void report_exit_code(int code) {
  const char* path = std::getenv("CELLGAN_EXIT_FILE");
  if (path == nullptr || *path == '\0' || launch_rank() != 0) return;
  const std::string target(path), temporary = target + ".tmp";
  if (std::FILE* f = std::fopen(temporary.c_str(), "w")) {
    const bool written = std::fprintf(f, "%d\n", code) > 0;
    if (std::fclose(f) == 0 && written) std::rename(temporary.c_str(), target.c_str());
  }
}

bool launcher_gone() {
  const char* value = std::getenv("CELLGAN_LAUNCHER_PID");
  if (value == nullptr) return false;
  const std::string text(value);
  const std::size_t at = text.find('@');
  if (at == std::string::npos || text.substr(at + 1) != host_name()) return false;
  char* end = nullptr;
  const long pid = std::strtol(text.c_str(), &end, 10);
  if (end != text.c_str() + at || pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::vector<std::string> launch_notes() {
  std::vector<std::string> lines;
  const char* notes = std::getenv("CELLGAN_LAUNCH_NOTES");
  if (notes == nullptr) return lines;
  std::istringstream in(notes);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace cellgan
