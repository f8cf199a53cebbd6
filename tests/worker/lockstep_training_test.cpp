// Lockstep training (worker/lockstep_training.h) against its reference,
// train_member_by_member() (tests/worker/member_by_member_training.h).
#include "worker/lockstep_training.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "common/nn/cuda_step_graph.h"
#include "common/nn/torch_generator_lock.h"
#include "tests/nn/stacked_members.h"
#include "tests/worker/member_by_member_training.h"
#include "tests/worker/toy_cell_fixture.h"
#include "worker/generation_steps.h"

namespace cellgan {
namespace {

using worker_test::Fixture;

// Wide enough that every product takes BLAS's path, a batch that is a
// multiple of 16, a population of two with mustangs' mixed loss kinds,
// every step mutated, and the discriminators stepping every other batch.
Config lockstep_config() {
  Config c = worker_test::toy_config();
  c.network.latent_dim = 16;
  c.network.toy_hidden = 32;
  c.network.toy_layers = 3;
  c.training.batch_size = 64;
  c.training.population_size = 2;
  c.training.loss = LossKind::kMustangs;
  c.training.mutation_probability = 1.0;
  c.training.mutation_scale = 1.0;
  c.training.discriminator_skip = 1;
  return c;
}

// Cell `cell`'s selected copies (its two pairs), seeded and with its
// mustangs losses drawn, as a generation hands them to training.
std::unique_ptr<GenerationWorkingSet> selected(Fixture& f, int cell) {
  CellState s = f.trainer.initial_state(cell, 4);
  auto work = std::make_unique<GenerationWorkingSet>();
  seed_generation(f.config, s, *work);
  draw_generation_losses(f.config.training, s, work->rng);
  for (std::size_t k = 0; k < s.generators.size(); ++k) {
    work->selected_generators.push_back(s.generators[k].clone());
    work->selected_discriminators.push_back(s.discriminators[k].clone());
  }
  return work;
}

struct Trained {
  std::vector<Bytes> bytes;  // generators, then discriminators
  std::vector<bool> diverged;
};

Trained trained(const GenerationWorkingSet& work) {
  Trained t;
  for (const auto* copies : {&work.selected_generators, &work.selected_discriminators})
    for (const Individual& i : *copies) t.bytes.push_back(i.encode());
  t.diverged = work.diverged_generators;
  t.diverged.insert(t.diverged.end(), work.diverged_discriminators.begin(), work.diverged_discriminators.end());
  return t;
}

// The cells trained in lockstep, together.
std::vector<Trained> in_lockstep(Fixture& f, const std::vector<int>& cells, std::int64_t batches,
                                 bool cuda_graphs = false, std::int64_t latent_steps_a_draw = 0) {
  std::vector<std::unique_ptr<GenerationWorkingSet>> works;
  std::vector<LockstepCell> lockstep;
  for (int cell : cells) {
    works.push_back(selected(f, cell));
    lockstep.push_back({cell, works.back().get()});
  }
  const auto lock = lock_torch_generator();
  const std::vector<double> mutating =
      train_in_lockstep(f.config.training, f.data, batches, f.config.network.latent_dim, lockstep, cuda_graphs,
                        latent_steps_a_draw);
  EXPECT_EQ(mutating.size(), cells.size());
  std::vector<Trained> out;
  for (const auto& w : works) out.push_back(trained(*w));
  return out;
}

// Each cell trained alone, one member at a time.
std::vector<Trained> one_at_a_time(Fixture& f, const std::vector<int>& cells, std::int64_t batches) {
  std::vector<Trained> out;
  for (int cell : cells) {
    auto work = selected(f, cell);
    const auto lock = lock_torch_generator();
    worker_test::train_member_by_member(f.config.training, f.data, batches, f.config.network.latent_dim, cell, *work);
    out.push_back(trained(*work));
  }
  return out;
}

TEST(LockstepTraining, EqualsEveryCellTrainedOneMemberAtATimeToTheBit) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  Fixture f(lockstep_config());
  const std::vector<int> cells{0, 4, 8};
  const std::vector<Trained> together = in_lockstep(f, cells, 4);
  const std::vector<Trained> alone = one_at_a_time(f, cells, 4);
  for (std::size_t k = 0; k < cells.size(); ++k) {
    ASSERT_EQ(together[k].bytes.size(), 4u);
    for (std::size_t i = 0; i < together[k].bytes.size(); ++i)
      EXPECT_EQ(test::bytes_difference(together[k].bytes[i], alone[k].bytes[i]), "")
          << "cell " << cells[k] << ", copy " << i << " (generators first)";
    EXPECT_EQ(together[k].diverged, alone[k].diverged);
  }
}

// Also at a batch of 50 and the narrow toy network, where a member's
// elementwise kernels would otherwise round by its place in the stack
// (member_aligned, stacked_tensor.h).
TEST(LockstepTraining, ACellsResultDoesNotDependOnTheOtherCellsOfItsStack) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  Config narrow = worker_test::toy_config();
  narrow.training.population_size = 2;
  narrow.training.loss = LossKind::kMustangs;
  narrow.training.mutation_probability = 1.0;
  for (const Config& c : {lockstep_config(), narrow}) {
    Fixture f(c);
    const std::vector<Trained> three = in_lockstep(f, {2, 5, 7}, 3);
    const std::vector<Trained> one = in_lockstep(f, {5}, 3);
    ASSERT_EQ(three[1].bytes.size(), one[0].bytes.size());
    for (std::size_t i = 0; i < one[0].bytes.size(); ++i)
      EXPECT_EQ(test::bytes_difference(three[1].bytes[i], one[0].bytes[i]), "")
          << "copy " << i << ", batch " << c.training.batch_size;
  }
}

// With the latent vectors drawn 16 steps' worth at a time, as on a GPU,
// over 34 batches (refills at steps 0, 16 and 32, a cell's G and D copies
// sharing its stream, two copies each): still independent of the stack.
TEST(LockstepTraining, DrawingSeveralStepsAtATimeACellsResultDoesNotDependOnItsStack) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  Config c = worker_test::toy_config();
  c.training.population_size = 2;
  Fixture f(c);
  const std::vector<Trained> three = in_lockstep(f, {2, 5, 7}, 34, false, 16);
  const std::vector<Trained> one = in_lockstep(f, {5}, 34, false, 16);
  const std::vector<Trained> step_by_step = in_lockstep(f, {5}, 34, false, 1);
  ASSERT_EQ(three[1].bytes.size(), 4u);
  for (std::size_t i = 0; i < one[0].bytes.size(); ++i) {
    EXPECT_EQ(test::bytes_difference(three[1].bytes[i], one[0].bytes[i]), "") << "copy " << i;
    EXPECT_NE(one[0].bytes[i], step_by_step[0].bytes[i]) << "copy " << i << ": other draws, other copies";
  }
}

// At the fixture's batch of 50 (not a multiple of 16) some batched kernels
// round apart from the single ones in the last bit (stacked_linear.h);
// over five steps the copies stay within a few units in the last place.
TEST(LockstepTraining, AtAnyBatchSizeEqualsOneMemberAtATimeToTheLastBits) {
  Config c = lockstep_config();
  c.training.batch_size = 50;
  Fixture f(c);
  const std::vector<Trained> together = in_lockstep(f, {1, 3}, 5);
  const std::vector<Trained> alone = one_at_a_time(f, {1, 3}, 5);
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t i = 0; i < together[k].bytes.size(); ++i)
      EXPECT_EQ(test::beyond_tolerance(together[k].bytes[i], alone[k].bytes[i], 8, 1e-6, 1e-3), "")
          << "cell " << k << ", copy " << i;
}

TEST(LockstepTraining, MarksTheCopiesAsTrainedInTheirCellAndKeepsTheTrainingLosses) {
  Config c = lockstep_config();
  c.training.population_size = 1;
  c.training.replacement = ReplacementRule::kAlways;  // so the copies keep their training losses
  Fixture f(c);
  std::vector<std::unique_ptr<GenerationWorkingSet>> works;
  for (int cell : {3, 6}) works.push_back(selected(f, cell));
  const auto lock = lock_torch_generator();
  train_in_lockstep(c.training, f.data, 4, c.network.latent_dim, {{3, works[0].get()}, {6, works[1].get()}});
  for (std::size_t k = 0; k < 2; ++k) {
    const GenerationWorkingSet& w = *works[k];
    EXPECT_EQ(w.selected_generators[0].source_cell, k == 0 ? 3 : 6);
    EXPECT_EQ(w.selected_discriminators[0].source_cell, k == 0 ? 3 : 6);
    ASSERT_EQ(w.training_generator_losses.size(), 1u);
    ASSERT_EQ(w.training_discriminator_losses.size(), 1u);
    EXPECT_TRUE(std::isfinite(w.training_generator_losses[0]));
    EXPECT_TRUE(std::isfinite(w.training_discriminator_losses[0]));
    EXPECT_NE(w.selected_generators[0].learning_rate(), c.training.learning_rate);  // mutated
  }
}

// The penalties' double backward passes through the stacked layers: with
// R1 and with WGAN-GP each cell comes out as it does in a stack of its own,
// to the bit, and as the reference leaves it to a few units in the last place
// (the input gradient is taken by the stacked layer's own backward, g W,
// whose second derivative rounds apart from Linear's; the same tolerance as
// tests/nn/stacked_training_test.cpp's R1 test, over four steps).
TEST(LockstepTraining, WithPenaltiesDoesNotDependOnTheStackAndIsOneMemberAtATimeToTheLastBits) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  Config r1 = lockstep_config();
  r1.training.r1_penalty = 2.0;
  Config wgan = lockstep_config();
  wgan.training.loss = LossKind::kWganGp;
  for (const Config& c : {r1, wgan}) {
    SCOPED_TRACE(c.training.loss == LossKind::kWganGp ? "wgan_gp" : "R1");
    Fixture f(c);
    const std::vector<int> cells{1, 6};
    const std::vector<Trained> together = in_lockstep(f, cells, 4);
    const std::vector<Trained> alone = one_at_a_time(f, cells, 4);
    const std::vector<Trained> own = in_lockstep(f, {6}, 4);
    for (std::size_t k = 0; k < cells.size(); ++k)
      for (std::size_t i = 0; i < together[k].bytes.size(); ++i)
        EXPECT_EQ(test::beyond_tolerance(together[k].bytes[i], alone[k].bytes[i], 8, 1e-7, 1e-3), "")
            << "cell " << cells[k] << ", copy " << i;
    for (std::size_t i = 0; i < own[0].bytes.size(); ++i)
      EXPECT_EQ(test::bytes_difference(together[1].bytes[i], own[0].bytes[i]), "") << "copy " << i;
  }
}

// per_class: each cell on data of its own (here the ring and the grid
// mixtures) trains in one stack as it does alone.
TEST(LockstepTraining, CellsWithDataOfTheirOwnTrainAsTheyDoAlone) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  Fixture f(lockstep_config());
  Config grid_config = lockstep_config();
  grid_config.data.dataset = DatasetKind::kGrid;
  const TrainingData grid_data(grid_config);
  ASSERT_EQ(grid_data.size(), f.data.size());
  const auto train = [&](const std::vector<std::pair<int, const TrainingData*>>& cells) {
    std::vector<std::unique_ptr<GenerationWorkingSet>> works;
    std::vector<LockstepCell> lockstep;
    for (const auto& [cell, data] : cells) {
      works.push_back(selected(f, cell));
      lockstep.push_back({cell, works.back().get(), data});
    }
    const auto lock = lock_torch_generator();
    train_in_lockstep(f.config.training, f.data, 3, f.config.network.latent_dim, lockstep);
    std::vector<Trained> out;
    for (const auto& w : works) out.push_back(trained(*w));
    return out;
  };
  const std::vector<Trained> together = train({{3, nullptr}, {6, &grid_data}});
  const std::vector<Trained> ring_alone = train({{3, nullptr}});
  const std::vector<Trained> grid_alone = train({{6, &grid_data}});
  const std::vector<Trained> grid_as_ring = train({{6, nullptr}});
  for (std::size_t i = 0; i < together[0].bytes.size(); ++i) {
    EXPECT_EQ(test::bytes_difference(together[0].bytes[i], ring_alone[0].bytes[i]), "") << "ring cell, copy " << i;
    EXPECT_EQ(test::bytes_difference(together[1].bytes[i], grid_alone[0].bytes[i]), "") << "grid cell, copy " << i;
    EXPECT_NE(together[1].bytes[i], grid_as_ring[0].bytes[i]) << "the grid cell's data made no difference, copy " << i;
  }
}

// Graphs asked for where none are captured (the CPU): every step runs, in
// its two parts, as without (population 1, so that each step plays its
// own opponents and would be captured on a GPU; tests/gpu/gpu_test.cpp
// compares the replayed steps there).
TEST(LockstepTraining, WithGraphsAskedForOnTheCpuEqualsWithoutToTheBit) {
  Config c = lockstep_config();
  c.training.population_size = 1;
  c.training.loss = LossKind::kBce;
  Fixture f(c);
  const std::vector<Trained> plain = in_lockstep(f, {2, 4}, CudaStepGraph::kWarmups + 3);
  const std::vector<Trained> graphs = in_lockstep(f, {2, 4}, CudaStepGraph::kWarmups + 3, true);
  for (std::size_t k = 0; k < plain.size(); ++k)
    for (std::size_t i = 0; i < plain[k].bytes.size(); ++i)
      EXPECT_EQ(test::bytes_difference(plain[k].bytes[i], graphs[k].bytes[i]), "") << "cell " << k << ", copy " << i;
}

TEST(LockstepTraining, EveryKindTrainsInLockstep) {
  Config c = lockstep_config();
  for (const NetworkKind kind : {NetworkKind::kMlp, NetworkKind::kToy, NetworkKind::kDcgan, NetworkKind::kSngan,
                                 NetworkKind::kDcganConditional}) {
    c.network.kind = kind;
    EXPECT_TRUE(trains_in_lockstep(network_shape(c))) << to_string(kind);
  }
}

}  // namespace
}  // namespace cellgan
