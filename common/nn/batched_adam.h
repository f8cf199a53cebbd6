// Adam over stacked tensors (docs/architecture.md, "Stacked networks"):
// every tensor has a leading member dimension P, and member p is updated as
// torch::optim::Adam would update that member alone, with its own learning
// rate and its own step count.
//
// The update, per member p with step count t (after adding this step),
// learning rate lr[p] and gradient g (weight decay 0, no amsgrad), is
// LibTorch's (torch/csrc/api/src/optim/adam.cpp), operation for operation:
//   m = m * beta1 + (1 - beta1) * g
//   v = v * beta2 + (1 - beta2) * g * g
//   bias_correction1 = 1 - beta1^t,  bias_correction2 = 1 - beta2^t
//   denom = sqrt(v) / sqrt(bias_correction2) + eps
//   param = param + (-lr / bias_correction1) * m / denom
// The bias corrections and the step size are computed in float64, as
// LibTorch computes them on the host, but here on the device from the step
// counts there, so a step enqueues no host work and reads nothing back (a
// CUDA graph can capture it). On the CPU the result equals Adam's to the
// bit (tests/nn/stacked_training_test.cpp); the one place it could differ
// is beta^t, taken by the vectorised pow of 8 or more members, which may
// differ from std::pow in a double's last bit, almost never visible once
// rounded to float.
//
// Step counts: 0 means "no Adam state yet" (an individual whose bytes carry
// step -1; its moments are zero, as Adam's would be when it makes them).
// A row mask (bool [P] on the device) makes only the members it marks step:
// the others keep their parameters, moments and step count bit for bit.
// Tensors without a gradient are left alone, as Adam does.
//
// One buffer (BatchedAdamOptions::one_buffer): the constructor moves the
// parameters' values into one buffer of the optimizer's, tensor after
// tensor (each from a multiple of 64 elements, the gaps zero), and points
// each parameter at its segment (Tensor::set_data, so every handle to it,
// a module's included, sees the same values as before); the moments are
// two more such buffers. A step then gathers the gradients into one buffer
// and updates every tensor at once: a fixed dozen kernels whatever the
// number of tensors (each member's scalars are spread over its elements by
// an int32 index of the buffer's size, made at the first step), where a
// step tensor by tensor takes about nine a tensor; on a GPU each kernel is
// a launch, or a node of a CUDA graph. Every element goes through the same
// operations in the same order either way, so the result is the same to the
// bit. A step falls back to tensor by tensor when a gradient is missing or
// of another dtype, or when a parameter has been given other storage on
// the same device (set_data); moving the parameters to another device or
// dtype (Module::to) is not supported, with one buffer or without.
//
// Thread-safety: one BatchedAdam and its tensors belong to one thread at a
// time.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace cellgan {

struct BatchedAdamOptions {
  double beta1 = 0.5;
  double beta2 = 0.999;
  double eps = 1e-8;  // torch::optim::AdamOptions' default
  // The parameters and moments in one buffer each (above); taken only when
  // every parameter has one floating dtype.
  bool one_buffer = false;
};

// The step's scalars per member, [P] float32 on the device of `next_steps`:
// -lr / (1 - beta1^t) and sqrt(1 - beta2^t), for the step counts t =
// `next_steps` ([P] int64, after adding the step; 0 is taken as 1) and the
// learning rates `learning_rates` ([P] float64). An update of member p is
// then, elementwise,
//   denom = sqrt(v) / sqrt_bias_correction2[p] + eps
//   param = param + (neg_step_size[p] * m) / denom
// (ShardedAdam, worker/sharded_adam.h, steps its pieces with the same
// scalars, so that its updates are this class's to the bit).
struct AdamStepScalars {
  torch::Tensor neg_step_size;
  torch::Tensor sqrt_bias_correction2;
};
AdamStepScalars adam_step_scalars(const torch::Tensor& next_steps, const torch::Tensor& learning_rates,
                                  const BatchedAdamOptions& options);

// One Adam update, in place, of `param` from `grad` with its moments
// `exp_avg` and `exp_avg_sq`, the operations of the update above in their
// order; `neg_step_size` and `sqrt_bias_correction2` broadcast against them
// (AdamStepScalars viewed per member, per_member() of stacked_tensor.h, or
// spread to every element). With `keep` (bool, broadcasting alike) the
// update is computed aside and only the kept elements take it. Every Adam
// step of cellgan's stacks goes through this one function: BatchedAdam's,
// tensor by tensor or in one buffer, and ShardedAdam's pieces.
void adam_update(const torch::Tensor& param, const torch::Tensor& grad, const torch::Tensor& exp_avg,
                 const torch::Tensor& exp_avg_sq, const torch::Tensor& neg_step_size,
                 const torch::Tensor& sqrt_bias_correction2, const BatchedAdamOptions& options,
                 const torch::Tensor& keep = {});

class BatchedAdam {
 public:
  // `params`: leaf tensors that require grad, each [P, ...] on one device.
  // Every member starts with `learning_rate` and no state (step 0).
  BatchedAdam(std::vector<torch::Tensor> params, double learning_rate, BatchedAdamOptions options = {});

  std::int64_t members() const { return members_; }
  const BatchedAdamOptions& options() const { return options_; }

  // Zeroes the gradients that exist (torch::optim::Optimizer::zero_grad of
  // LibTorch 1.13), keeping their tensors for the next backward pass.
  void zero_grad();
  // One step of every member.
  void step();
  // One step of the members whose entry of `row_mask` (bool [P], on the
  // parameters' device) is true.
  void step(const torch::Tensor& row_mask);

  // [P] float64 on the device: each member's learning rate.
  const torch::Tensor& learning_rates() const { return learning_rates_; }
  void set_learning_rate(std::int64_t p, double lr);
  // Every member's at once, in one copy to the device that does not wait
  // for the device's queue (std::invalid_argument unless there is one per
  // member).
  void set_learning_rates(const std::vector<double>& lrs);
  // [P] int64 on the device: each member's step count.
  const torch::Tensor& steps() const { return steps_; }
  void set_step(std::int64_t p, std::int64_t step);
  // Every member's at once, as set_learning_rates() sets the rates.
  void set_steps(const std::vector<std::int64_t>& steps);

  // True when the parameters live in one buffer (one_buffer above).
  bool in_one_buffer() const { return flat_params_.defined(); }

  // The moments, one per parameter, of its shape.
  const std::vector<torch::Tensor>& params() const { return params_; }
  const std::vector<torch::Tensor>& exp_avg() const { return exp_avg_; }
  const std::vector<torch::Tensor>& exp_avg_sq() const { return exp_avg_sq_; }
  // Frees the moments while another keeps them (ShardedAdam, which holds a
  // worker's part only): until set_moments(), step() and readers of the
  // moments are not to be called. set_moments() puts moments of each
  // parameter's shape in (std::invalid_argument otherwise).
  void drop_moments();
  void set_moments(std::vector<torch::Tensor> exp_avg, std::vector<torch::Tensor> exp_avg_sq);

 private:
  void check_member(std::int64_t p, const char* what) const;
  void update(const torch::Tensor& row_mask);
  // The one-buffer layout: made by the constructor; a step takes it while
  // every parameter is still on its segment and has a gradient of its dtype.
  void move_into_one_buffer();
  std::vector<torch::Tensor> segments_of(const torch::Tensor& flat) const;
  const torch::Tensor& member_of();
  bool one_buffer_step_possible() const;
  void update_one_buffer(const torch::Tensor& row_mask, const AdamStepScalars& scalars);

  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> exp_avg_;
  std::vector<torch::Tensor> exp_avg_sq_;
  BatchedAdamOptions options_;
  std::int64_t members_ = 0;
  torch::Tensor learning_rates_;
  torch::Tensor steps_;
  // One buffer: the parameters' and the moments' buffers [N], each
  // parameter's first element in them, each element's member (int32 [N],
  // made at the first step: member_of()), and zeros for the gradient's gaps.
  torch::Tensor flat_params_;
  torch::Tensor flat_exp_avg_;
  torch::Tensor flat_exp_avg_sq_;
  std::vector<std::int64_t> offsets_;
  torch::Tensor member_of_;
  torch::Tensor gap_zeros_;
};

}  // namespace cellgan
