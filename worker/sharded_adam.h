// ZeRO stage 1 for one network of a data-parallel replica (configuration
// data_parallel.shard_optimizer; seed 002): each worker keeps Adam's
// moments for its own shard of the network's parameters only, about 1/W of
// them. A step (step()):
//  1. the gradients, and one extra value (the worker's part of the loss),
//     are packed into buffers as allreduce_fused packs them
//     (gradient_fusion.h), and each buffer is reduce-scattered: this
//     worker's shard of it (own_shard, gradient_allreduce.h) is summed;
//  2. with clip_grad_norm > 0, the squares of every shard's gradients are
//     summed over the workers, and the shards scaled by
//     clip / (norm + 1e-6) where that is below 1, as clip_grad_norm_ scales
//     whole gradients;
//  3. Adam steps the parameters' pieces in its shard, with the operations
//     and step scalars of BatchedAdam (batched_adam.h: adam_step_scalars),
//     the network's Adam learning rate and betas, and one step count for
//     the network;
//  4. the buffers of parameters, with the summed loss in the extra value,
//     are all-gathered in float32 and unpacked into the parameters.
// Every worker then holds the same parameters. With the ring all-reduce and
// no clipping they are the unsharded replica's (allreduce_fused, then
// BatchedAdam) to the bit on the CPU: the shard's sums are the ring's own,
// and Adam's operations are element-wise with the same scalars
// (tests/worker/sharded_adam_test.cpp). Clipping sums the squares in
// another order than clip_grad_norm_, so its factor may differ in the last
// bits.
//
// The network is a stack of one (stacked_networks.h): its parameters are
// the stacked tensors [1, ...], packed flat in their stacked layout. The
// stack's own BatchedAdam is not used while sharded: its state is handed
// over at construction and its moments dropped, until gather() puts the
// whole state back on worker 0 for a checkpoint (rows in the Individual
// byte form, so that any W, sharded or not, resumes it).
//
// Thread-safety: the training thread's, as the all-reduce.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "common/nn/stacked_networks.h"
#include "worker/gradient_allreduce.h"

namespace cellgan {

class ShardedAdam {
 public:
  // `net`, a stack of one member (std::invalid_argument otherwise), must
  // outlive this; its Adam state (if any) becomes this worker's shard of
  // it, and Adam's own is dropped (step count 0, moments freed).
  ShardedAdam(StackedMembers& net, std::int64_t fusion_bytes, int rank, int workers);

  // One step of the network from its gradients (steps 1-4 above); `loss`,
  // this worker's part on entry, is the sum over the workers on return.
  // None once done, else the interruption (the network is then half
  // stepped, and the replica is to be dropped).
  [[nodiscard]] std::optional<Interruption> step(GradientAllreduce& reduce, float& loss, double clip_grad_norm);

  // A collective: every worker sends its shard's moments to worker 0,
  // which puts the whole state into the network's Adam. release() drops it
  // again; hand_back() (after which this is not to be used) leaves the
  // network's Adam with moments again, zero, and no step taken.
  [[nodiscard]] std::optional<Interruption> gather(WorkerExchange& exchange);
  void release();
  void hand_back();

  // Bytes of the moments this worker keeps.
  std::int64_t state_bytes() const;

 private:
  // Parameter `param`'s elements [from, from + count), at `at` in buffer
  // `group`, with their moments (on the network's device).
  struct Piece {
    std::size_t param = 0;
    std::int64_t from = 0;
    std::int64_t count = 0;
    std::size_t group = 0;
    std::size_t at = 0;
    torch::Tensor exp_avg;
    torch::Tensor exp_avg_sq;
  };
  std::vector<Piece> pieces_of(int rank) const;
  void pack(const std::vector<torch::Tensor>& tensors, std::vector<std::vector<float>>& buffers) const;

  StackedMembers& net_;
  int rank_;
  int workers_;
  std::vector<std::int64_t> numels_;                // the parameters', then 1 for the loss
  std::vector<std::vector<std::size_t>> groups_;    // fusion_groups of numels_
  std::vector<Piece> pieces_;                       // this worker's
  std::int64_t step_ = 0;                           // Adam steps taken (0: none yet)
};

}  // namespace cellgan
