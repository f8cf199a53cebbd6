// Whether the configured all-reduce can run here (see allreduce_check.h).
// CELLGAN_NCCL is defined for this file alone where the build has NCCL.
#include "common/nn/allreduce_check.h"

#include <fmt/format.h>

#include "common/error.h"

namespace cellgan {

bool nccl_built() {
#ifdef CELLGAN_NCCL
  return true;
#else
  return false;
#endif
}

void check_allreduce(const Config& config, const torch::Device& device) {
  if (config.layout != LayoutKind::kDataParallel || config.data_parallel.allreduce != AllreduceKind::kNccl) return;
  if (!nccl_built())
    throw InputError(fmt::format("{}: data_parallel.allreduce: nccl: this cellgan was built without NCCL (it is "
                                 "built where LibTorch has CUDA and nccl.h is found): expected ring, "
                                 "reduce_broadcast or mpi",
                                 config.source));
  if (!device.is_cuda())
    throw InputError(fmt::format("{}: data_parallel.allreduce: nccl sums on GPUs and the device is {}: expected "
                                 "runtime.device cuda, or allreduce ring, reduce_broadcast or mpi",
                                 config.source, device.str()));
}

}  // namespace cellgan
