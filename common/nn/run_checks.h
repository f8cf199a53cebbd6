// Every check of a configuration against the device it runs on, made by
// the master before it starts the workers and by each worker on its own
// device: InputError, one line naming the key, from
// - check_precision (precision.h): fp16 without a GPU;
// - check_allreduce (allreduce_check.h): nccl without NCCL or a GPU;
// - check_cuda_graphs (cuda_step_graph.h): cuda_graphs on without a GPU
//   or graphs.
//
// Thread-safety: a pure function.
#pragma once

#include <torch/types.h>

#include "common/config.h"

namespace cellgan {

void check_runs_on(const Config& config, const torch::Device& device);

}  // namespace cellgan
