// Whether the data-parallel all-reduce a configuration names can run in
// this build and on this device (configuration key data_parallel.allreduce).
//
// `nccl` (worker/nccl_allreduce.h) needs a cellgan built with NCCL — the
// CMake option CELLGAN_NCCL, on by default where LibTorch has CUDA and
// NCCL's header and library are found — and a GPU to sum on. ring,
// reduce_broadcast and mpi run anywhere.
//
// Thread-safety: pure functions.
#pragma once

#include <torch/types.h>

#include "common/config.h"

namespace cellgan {

// Whether this build has NCCL.
bool nccl_built();

// InputError "SOURCE: data_parallel.allreduce: ..." when a data_parallel
// run asks for `nccl` and this build has no NCCL, or `device` is not a GPU.
void check_allreduce(const Config& config, const torch::Device& device);

}  // namespace cellgan
