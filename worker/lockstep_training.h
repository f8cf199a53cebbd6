// Steps 4 and 5 of a generation for the cells of a worker at once, as
// stacked networks (docs/architecture.md, "Stacked networks"): every
// selected generator of every cell is a member of one StackedGenerator,
// every selected discriminator a member of one StackedDiscriminator, and
// each batch is one batched step of each stack.
//
// What each cell's copies go through, `batches` batches of one random
// permutation of its data: on the batches where common/step_schedule.h says
// so (all of them, but for wgan_gp every n_critic-th) each selected G steps
// against a selected D its cell's stream picks; then on the batches it says
// so (every (discriminator_skip + 1)-th, but for wgan_gp all of them) each
// selected D steps against a picked G, with its penalty
// (discriminator_step.h); mutate_learning_rate() (generation_steps.h) runs
// before every step. A copy whose loss is ever non-finite is marked in
// work.diverged_* (the losses are checked on the device and read once,
// after the last batch), and so is each copy's mean loss when
// copies_score_decides_nothing(). The copies are then marked as trained in
// their cell and their gradients freed.
//
// Per cell the draws come from the cell's own streams, in a fixed order
// (work.rng for the choices and mutations, work.generator for the data's
// order, latent_generator() for the latent vectors: on a GPU a Philox
// generator of the cell's own, drawing there 16 steps' worth at a time,
// LatentDraws of lockstep_parts.h): so a cell's result does not
// depend on which cells share its stacks, nor on the worker that holds it,
// apart from how the device's kernels round for stacks of other sizes (on
// the CPU they do not; on a GPU, tests/gpu/check.sh compares W = 1 against
// W = 2).
// Each member keeps its own loss kind (mustangs), learning rate, mutation
// and Adam step count (batched_adam.h). When every member picks the member
// of its own row (population_size 1), the other stack is used as it
// stands, else its picked rows are copied into a stack of opponents before
// each step.
//
// The reference is the same training one member at a time with each
// copy's own modules and LibTorch's Adam (train_member_by_member() of
// tests/worker/member_by_member_training.h), drawing every step's latent
// vectors as it comes: on a GPU, which draws 16 steps' worth at a time,
// the lockstep follows it in distribution only. On the CPU with OpenBLAS each
// member's matrix products are the ones its own network takes
// (stacked_linear.h), so a cell's copies come out as the reference leaves
// them: to the bit for batches that are multiples of 16, within a few units
// in the last place otherwise and with penalties (the elementwise kernels
// are laid out per member, member_aligned() of stacked_tensor.h, where the
// reference takes ATen's scalar tail); and to the bit as they come out of
// any other stack (tests/worker/lockstep_training_test.cpp). The dcgan,
// sngan and dcgan_conditional kinds (whose labels ride in each cell's
// latent vectors and real rows) come out as the reference leaves them to
// rounding (stacked_dcgan.h; tests/nn/stacked_dcgan_training_test.cpp),
// apart from the draws and running statistics noted at
// trains_in_lockstep(), and to the bit as they come out of any other stack.
//
// Errors: std::invalid_argument for a configuration that
// trains_in_lockstep() refuses, or cells whose copies differ in shape.
// Thread-safety: one run per training thread; its stacks are made undrawn
// (initial_weights.h) and every draw comes from the cells' streams, so it
// draws nothing from Torch's global generator.
#pragma once

#include <cstdint>
#include <vector>

#include "common/config.h"
#include "common/nn/networks.h"
#include "common/nn/training_data.h"

namespace cellgan {

struct GenerationWorkingSet;

// One cell's part of a lockstep step: its working set after selection
// (work->selected_* are its copies) and its cell number.
struct LockstepCell {
  int cell = -1;
  GenerationWorkingSet* work = nullptr;
  const TrainingData* data = nullptr;  // the cell's own data (per_class); null: the shared one
};

// True when the network trains in lockstep: the kinds that are stacked
// (is_stacked() of stacked_networks.h), which are all of them. Penalties
// (R1, WGAN-GP) are taken per member as discriminator_step.h takes them.
// WGAN-GP's interpolation shares and the dropout masks are drawn from a
// stream per cell seeded from work.global_seed (generator_on() the device,
// member_draws.h), as the reference draws them from Torch's global
// generator seeded alike (so the streams are the reference's, but not in
// its order: the bits differ from it where dropout or WGAN-GP draw). Batch
// norm's running statistics: a member's are updated by the passes it takes
// part in; when members play copies of the opponents they picked
// (population_size > 1), an opponent's statistics are those of the pass of
// the first member that picked it.
bool trains_in_lockstep(const NetworkShape& shape);

// Steps 4 and 5 (above) for every cell of `cells` on `data`, or on its own
// data where a cell has some (std::invalid_argument when that gives batches
// of another size), `batches` batches each, its steps captured and replayed
// as CUDA graphs when `cuda_graphs` (cuda_step_graph.h; the result is the
// same as without): leaves in each cell's working set its trained copies,
// marked as trained in the cell, the diverged_* flags and, when
// copies_score_decides_nothing(), the training losses. Each batch first
// sleeps the longest batch_delay of the cells. Returns the seconds spent
// mutating, per cell. `latent_steps_a_draw` is LatentDraws' (lockstep_parts.h);
// 0, the device's: 16 on a GPU, 1 on the CPU.
std::vector<double> train_in_lockstep(const TrainingConfig& training, const TrainingData& data, std::int64_t batches,
                                      std::int64_t latent_dim, const std::vector<LockstepCell>& cells,
                                      bool cuda_graphs = false, std::int64_t latent_steps_a_draw = 0);

}  // namespace cellgan
