// The checks of a configuration against its device (see run_checks.h).
#include "common/nn/run_checks.h"

#include "common/nn/allreduce_check.h"
#include "common/nn/cuda_step_graph.h"
#include "common/nn/precision.h"

namespace cellgan {

void check_runs_on(const Config& config, const torch::Device& device) {
  check_precision(config, device);
  check_allreduce(config, device);
  check_cuda_graphs(config, device);
}

}  // namespace cellgan
