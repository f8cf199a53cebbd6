// The training of one replica of the data-parallel layout (configuration
// `layout: data_parallel`, section data_parallel): every worker holds the
// same G/D pair and each step
//  1. takes its shard of the global batch: the global batch of step q is
//     rows [q·B, (q+1)·B) of the epoch's shuffle (seeded by the run's seed
//     and the epoch), B = batch_size·W (scaling weak) or batch_size
//     (strong), and worker r's shard is its r-th of W contiguous slices;
//  2. runs forward and backward on it, accumulate_steps micro-batches,
//     each loss scaled by (shard rows / global rows) / accumulate_steps so
//     that the sum over the workers is the global batch's mean;
//  3. sums the gradients over the workers (GradientAllreduce, packed by
//     gradient_fusion.h) with the loss as one extra value, so every worker
//     also gets the global loss;
//  4. clips (clip_grad_norm) and applies the same Adam step everywhere.
// The generator steps first, then, on every (discriminator_skip + 1)-th
// step, the discriminator, with the losses of common/nn (losses.h per
// member, and R1 and WGAN-GP as stacked_penalties.h takes them).
// After both, the networks' float buffers (BatchNorm's running statistics,
// which each replica updates from its own shard) are averaged the same way,
// so the replicas stay identical to the bit.
//
// The pair is a stack of one (stacked_networks.h, the networks every
// layout trains): a StackedGenerator and a StackedDiscriminator of one
// member each, stepped by their BatchedAdam (or by ShardedAdam,
// sharded_adam.h, with data_parallel.shard_optimizer); bf16 and fp16 run
// under AutocastScope (precision.h), fp16 with one LossScaler per network
// (loss_scaler.h) on the summed gradients. The pair's bytes are its rows in
// the Individual byte form, so checkpoints and ensembles keep their format.
//
// Determinism: the initial weights come from (seed) alone; a worker's
// latent vectors, dropout masks and WGAN-GP shares from a generator of the
// trainer's own, seeded from (seed, step, micro-batch, worker, role). Same
// seed and worker count, same bits.
//
// Thread-safety: the training thread's; the constructor draws from Torch's
// global generator (call it under lock_torch_generator() where ranks are
// threads); a step draws from the trainer's own generator only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <ATen/core/Generator.h>

#include "common/config.h"
#include "common/nn/loss_scaler.h"
#include "common/nn/stacked_networks.h"
#include "common/nn/training_data.h"
#include "worker/gradient_allreduce.h"
#include "worker/sharded_adam.h"

namespace cellgan {

// What the steps since the last take_tally() did.
struct ReplicaTally {
  std::int64_t steps = 0;
  std::int64_t generator_steps = 0;      // fewer than steps for wgan_gp (every n_critic-th)
  std::int64_t discriminator_steps = 0;
  std::int64_t images = 0;          // rows of this worker's shards, one batch per step
  double generator_loss = 0.0;      // the global batch's, summed over the generator steps
  double discriminator_loss = 0.0;  // the same, over the discriminator steps
  double compute_seconds = 0.0;     // forward, backward, clipping, Adam
  double communicate_seconds = 0.0; // packing and all-reducing
  std::int64_t skipped_steps = 0;   // fp16: steps whose gradients overflowed (loss_scaler.h)
};

class ReplicaTrainer {
 public:
  // `data` must outlive the trainer. `workers` >= 1, 0 <= rank < workers.
  // Builds the pair from the seed (Torch's global generator: call it under
  // lock_torch_generator() where ranks are threads). Throws InputError for
  // loss mustangs, or a global batch smaller than W.
  ReplicaTrainer(const Config& config, const TrainingData& data, int rank, int workers);

  // One step, number `step` (0-based, counted over the whole run): the
  // generator and then the discriminator, each on the steps
  // common/step_schedule.h gives (for wgan_gp the critic on every step with
  // the gradient penalty, the generator on every n_critic-th).
  // None once done, else the interruption of an all-reduce (the trainer is
  // then to be dropped: its networks are half-stepped).
  [[nodiscard]] std::optional<Interruption> step(std::int64_t step, GradientAllreduce& reduce);
  ReplicaTally take_tally();

  // The pair, one member each.
  StackedGenerator& generator() { return generator_; }
  StackedDiscriminator& discriminator() { return discriminator_; }
  // The generator as an individual without Adam state (an ensemble's);
  // draws nothing (Individual::decode makes it undrawn).
  Individual generator_weights() const;
  // n samples [n, data_dim] of the generator in eval mode, latent vectors
  // from `gen` (on the CPU).
  torch::Tensor sample(std::int64_t n, at::Generator gen);
  // The pair with Adam state, for a checkpoint; and back. Sharded
  // (data_parallel.shard_optimizer), encode() needs gather_optimizer()
  // first on every worker, and only worker 0's bytes hold the state.
  Bytes encode() const;
  [[nodiscard]] std::optional<Interruption> gather_optimizer(WorkerExchange& exchange);
  void release_gathered_optimizer();
  bool sharded() const { return config_.data_parallel.shard_optimizer && workers_ > 1; }
  // Bytes of Adam moments this worker keeps (both networks).
  std::int64_t optimizer_state_bytes();
  void decode(const Bytes& bytes, const std::string& what);

  // Rows of the global batch and this worker's shard of it.
  std::int64_t global_rows() const { return global_rows_; }
  std::int64_t shard_rows() const { return shard_end_ - shard_begin_; }
  // float32 on the replica's device: where stream_ draws.
  torch::TensorOptions on_device() const {
    return torch::TensorOptions().dtype(torch::kFloat32).device(data_.device());
  }

 private:
  // The rows of micro-batch `micro` (0-based over the run) for this worker.
  torch::Tensor shard_index(std::int64_t micro);
  // Seeds stream_ for micro-batch `micro` of `role`'s pass.
  void seed_micro_batch(std::int64_t micro, int role);
  // [1, rows, latent_dim] on the device, drawn from stream_.
  torch::Tensor latent_batch();
  // The generator's and the discriminator's loss on one micro-batch,
  // scaled to the global batch and accumulate_steps, backward taken.
  torch::Tensor generator_micro_step(double scale);
  torch::Tensor discriminator_micro_step(std::int64_t micro, double scale);
  // All-reduces net's gradients and adds the step's loss (the sum of its
  // micro-batch `losses`, over every replica) to `tally`: at once with
  // several workers, at take_tally() alone.
  // These return the interruption of an all-reduce, if any.
  std::optional<Interruption> reduce_gradients(StackedMembers& net, std::vector<torch::Tensor> losses, double& tally,
                                               GradientAllreduce& reduce);
  std::optional<Interruption> average_buffers(GradientAllreduce& reduce);
  // loss.backward(), of the loss scaled by `scaler` for fp16.
  void backward(const torch::Tensor& loss, const LossScaler& scaler) const;
  // Sums `net`'s gradients over the workers, clips, and takes its Adam
  // step: whole (its Adam's time added to `computing`), or by `shard`.
  std::optional<Interruption> reduce_and_step(StackedMembers& net, std::unique_ptr<ShardedAdam>& shard,
                                              std::vector<torch::Tensor> losses, double& tally,
                                              GradientAllreduce& reduce, double& computing);
  // Sums, clips and steps `net` by `shard` (made at its first use).
  std::optional<Interruption> sharded_step(StackedMembers& net, std::unique_ptr<ShardedAdam>& shard,
                                           std::vector<torch::Tensor> losses, double& tally, GradientAllreduce& reduce);

  const Config& config_;
  const TrainingData& data_;
  int rank_;
  int workers_;
  std::int64_t global_rows_ = 0;
  std::int64_t shard_begin_ = 0;
  std::int64_t shard_end_ = 0;
  double weight_ = 1.0;  // shard rows / global rows
  StackedGenerator generator_;
  StackedDiscriminator discriminator_;
  at::Generator stream_;  // on the device (generator_on): latent vectors, dropout masks, WGAN-GP's shares (seed_micro_batch())
  std::int64_t order_epoch_ = -1;
  torch::Tensor order_;  // the shuffle of order_epoch_
  ReplicaTally tally_;
  LossScaler generator_scaler_;  // training.precision fp16
  LossScaler discriminator_scaler_;
  std::unique_ptr<ShardedAdam> generator_shard_;      // when sharded()
  std::unique_ptr<ShardedAdam> discriminator_shard_;
  // A lone worker's step losses, still on the device, and the tally each
  // belongs to (take_tally() adds them in order).
  std::vector<std::pair<double*, std::vector<torch::Tensor>>> pending_losses_;
};

}  // namespace cellgan
