// The launcher's rank of this process (see launch_rank.h).
#include "common/launch_rank.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <initializer_list>

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

}  // namespace cellgan
