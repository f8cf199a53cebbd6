// The parts of a lockstep run (lockstep_training.h) that hold stacks for
// a step: the opponents a member plays, the parameters frozen while a
// backward pass goes through them, the learning rates mutated on the host,
// and the losses watched on the device; and the cells' streams.
// Each splits what it does on the host before a step (plan()) from what
// the step enqueues on the device, so that a step can be captured as a
// CUDA graph (cuda_step_graph.h).
//
// Thread-safety: they belong to the lockstep run's thread.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/nn/stacked_networks.h"

namespace cellgan {

struct GenerationWorkingSet;

// What the cells of a lockstep run draw from, one generator of each kind
// per cell (works[k] cell k's working set) on the run's `device`: `latent`,
// its latent vectors (latent_generator() of generation_steps.h); `noise`,
// its dropout masks and WGAN-GP's shares, seeded from work.global_seed (on
// a GPU, Philox generators there: member_draws.h).
struct CellStreams {
  CellStreams(const std::vector<const GenerationWorkingSet*>& works, torch::Device device);

  std::vector<at::Generator> latent, noise;
};

// A stack's latent vectors, step after step, each member's from its own
// generator (`generators`, one per member: its cell's latent stream). With
// `steps_a_draw` 1 they are drawn into each member's row of the step's
// tensor at each step (draw_normal_rows of member_draws.h: one kernel a
// member). With more, each member draws that many steps' worth at once
// ([steps_a_draw, ...] from its generator, when the last are used up), and
// a step copies its slice of every member in one kernel: on a GPU, where
// each kernel is a launch, one a step instead of one a member. Either way a
// member's values depend only on its generator and the steps taken, not
// on the other members; the two ways draw different values.
class LatentDraws {
 public:
  LatentDraws(std::vector<at::Generator> generators, std::int64_t steps_a_draw);
  // This step's latent vectors into z [P, ...], one row a member.
  void next(const torch::Tensor& z);

 private:
  std::vector<at::Generator> generators_;
  std::int64_t steps_a_draw_;
  torch::Tensor drawn_;  // [P, steps_a_draw, ...]
  std::int64_t used_ = 0;
};

// The other stack's rows that each member plays against, one per member:
// the stack itself when every member picks its own row, else a stack of
// opponents the picked rows are copied into before each use. A copy's
// dropout draws from the streams of the members that play it (`streams`);
// what its forward passes change in its buffers (batch norm's running
// statistics) goes back to the picked rows, from the first member that
// picked each.
class Opponents {
 public:
  Opponents(StackedMembers& stack, std::int64_t members, std::vector<at::Generator> streams)
      : stack_(stack), members_(members), streams_(std::move(streams)) {}

  // On the host, before a step: the rows the members pick. True when every
  // member picks its own row (the step then plays the stack as it stands).
  bool plan(const std::vector<std::int64_t>& rows);
  // In the step: the stack to play, the picked rows copied in when planned.
  StackedMembers& stack();
  // In the step, after the forward passes of stack(): the copy's buffers
  // back to the picked rows.
  void return_buffers();

 private:
  void make_copy();

  StackedMembers& stack_;
  std::int64_t members_;
  std::vector<at::Generator> streams_;
  std::unique_ptr<StackedMembers> copy_;
  bool own_ = true;
  torch::Tensor picked_;                    // [members_] long, on the device: the planned rows
  torch::Tensor first_members_, first_rows_;  // each picked row once, with the first member that picked it
};

// While it lives, `stack`'s parameters take no gradient (a backward pass
// goes through them, not into them); then they take it again.
class FrozenParameters {
 public:
  explicit FrozenParameters(StackedMembers& stack);
  ~FrozenParameters();
  FrozenParameters(const FrozenParameters&) = delete;
  FrozenParameters& operator=(const FrozenParameters&) = delete;

 private:
  std::vector<torch::Tensor> frozen_;
};

// A stack's learning rates on the host, mutated member by member before a
// step and sent to the device at once.
struct HostRates {
  std::vector<double> own, adam;

  explicit HostRates(const StackedMembers& stack) : adam(stack.adam_learning_rates()) {
    for (std::int64_t p = 0; p < stack.size(); ++p) own.push_back(stack.learning_rate(p));
  }
};

// What is watched of each member's losses, all members at once, on the device:
// made at the first note() and updated in place after it (a captured step
// adds to the same storage). `steps` is counted by the caller on the host.
struct StackWatch {
  torch::Tensor lost;  // [P] bool
  torch::Tensor sum;   // [P], when summing; starts at -0.0, which adds as nothing
  std::int64_t steps = 0;

  void note(const torch::Tensor& per_member, bool summing);
};

}  // namespace cellgan
