// The process's lock of Torch's global generator (see torch_generator_lock.h).
#include "common/nn/torch_generator_lock.h"

namespace cellgan {

std::unique_lock<std::recursive_mutex> lock_torch_generator() {
  static std::recursive_mutex mutex;
  return std::unique_lock<std::recursive_mutex>(mutex);
}

}  // namespace cellgan
