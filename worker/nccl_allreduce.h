// data_parallel.allreduce: nccl — the gradients summed by NCCL
// (ncclAllReduce) on the workers' GPUs, as seed 001's NcclAllReduce and
// PyTorch's DistributedDataParallel sum them.
//
// - Joining (a collective): worker 0 of LOCAL makes NCCL's unique id
//   (ncclGetUniqueId) and sends it to every other worker over LOCAL
//   (kTagNcclId, protocol.h); each worker then joins one NCCL communicator
//   of LOCAL's size, with its LOCAL rank, on its own GPU
//   (ncclCommInitRankConfig, non-blocking). One GPU per worker: NCCL
//   refuses two ranks on one GPU.
// - Summing: sum_on_device() sums a float32 buffer in the GPU's memory in
//   place, on the device's default stream (where LibTorch's kernels run
//   unless a stream guard says otherwise), and returns once it is done;
//   sum() stages a host buffer through the GPU. NCCL reduces each element
//   once and copies the result, so every worker holds the same bits, and
//   the same ranks and sizes give the same bits run after run. Its order of
//   addition is its own: with W > 2 the sums round otherwise than the
//   ring's (with W = 2 every order gives the same bits).
// - Waiting never lasts for good: while NCCL works, the wait polls the
//   exchange for an interruption (the master's abort, a rehoming) and NCCL
//   for an error. On an interruption the communicator is aborted
//   (ncclCommAbort) and the interruption returned; NCCL's or CUDA's errors
//   throw std::runtime_error. After either the all-reduce is spent: the
//   layout joins a new one.
// - The tally counts one message per sum, and the bytes a ring would send
//   (what NCCL sends is its own), as mpi does.
// - Two levels (hierarchy two_level, join_nccl_two_level): one NCCL
//   communicator per node, of its workers (the node's leader makes the
//   unique id and sends it to them over LOCAL, kTagNcclId); a sum is
//   ncclReduce onto the leader's GPU, the leaders' host copies summed
//   across nodes by across_nodes (ring, reduce_broadcast or mpi, as
//   two_level_allreduce.h's step 2, `compression` on its messages), then
//   ncclBroadcast from the leader. Every worker ends with the leader's bits.
//   A node of one worker makes no NCCL communicator.
//
// Built only where cellgan has NCCL (common/nn/allreduce_check.h);
// elsewhere join_nccl() throws std::logic_error (the configuration check
// refuses nccl first).
//
// Thread-safety: the training thread's, like every all-reduce; the GPU
// becomes that thread's current CUDA device.
#pragma once

#include <memory>

#include "worker/gradient_allreduce.h"
#include "worker/node_map.h"

namespace cellgan {

// Joins LOCAL's NCCL communicator on GPU `cuda_device`; every worker calls
// it, in the same order among the exchange's collectives. The all-reduce,
// or the interruption that came first.
[[nodiscard]] Waited<std::unique_ptr<GradientAllreduce>> join_nccl(WorkerExchange& exchange, int cuda_device);

// The two-level all-reduce over `nodes` (nodes.workers() must equal LOCAL's
// size; std::invalid_argument otherwise): every worker calls it, in the
// same order among the exchange's collectives. `across` and `compression`
// are step 2's (make_across_nodes, two_level_allreduce.h).
[[nodiscard]] Waited<std::unique_ptr<GradientAllreduce>> join_nccl_two_level(WorkerExchange& exchange,
                                                                             int cuda_device, const NodeMap& nodes,
                                                                             AllreduceKind across,
                                                                             WireCompression compression);

}  // namespace cellgan
