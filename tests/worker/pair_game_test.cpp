// The fitness game on stacks (worker/pair_game.h) against the game played
// one pair at a time.
#include "worker/pair_game.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "common/nn/torch_generator_lock.h"
#include "tests/nn/stacked_members.h"
#include "tests/worker/toy_cell_fixture.h"
#include "worker/generation_steps.h"

namespace cellgan {
namespace {

using worker_test::Fixture;

struct Players {
  CellState state;
  torch::Tensor real, z;
  std::vector<Individual*> g, d;
};

// Three pairs with mustangs' loss kinds and fitness batches of 100.
Players players(Fixture& f) {
  Players p;
  p.state = f.trainer.initial_state(4, 4);
  GenerationWorkingSet work;
  seed_generation(f.config, p.state, work);
  draw_generation_losses(f.config.training, p.state, work.rng);
  draw_fitness_samples(f.config.training, f.data, f.config.network.latent_dim, work);
  p.real = work.fitness_real;
  p.z = work.fitness_latent;
  for (auto& g : p.state.generators) p.g.push_back(&g);
  for (auto& d : p.state.discriminators) p.d.push_back(&d);
  return p;
}

Config three_pairs() {
  Config c = worker_test::toy_config();
  c.training.population_size = 3;
  c.training.loss = LossKind::kMustangs;
  return c;
}

std::vector<double> fitness(const std::vector<Individual*>& of) {
  std::vector<double> out;
  for (const Individual* i : of) out.push_back(i->fitness);
  return out;
}

TEST(PairGame, EqualsTheGamePlayedOnePairAtATimeToTheLastBits) {
  Fixture f(three_pairs());
  Players p = players(f);
  const auto lock = lock_torch_generator();
  play_one_pair_at_a_time(p.g, p.d, p.real, p.z, BceForm::kPyTorch);
  const std::vector<double> alone_g = fitness(p.g), alone_d = fitness(p.d);
  PairGame game;
  game.play(p.g, p.d, p.real, p.z, BceForm::kPyTorch, nullptr);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::isfinite(p.g[i]->fitness));
    EXPECT_NEAR(p.g[i]->fitness, alone_g[i], 1e-6 * std::abs(alone_g[i])) << "generator " << i;
    EXPECT_NEAR(p.d[i]->fitness, alone_d[i], 1e-6 * std::abs(alone_d[i])) << "discriminator " << i;
  }
}

// A pair's losses do not depend on who else plays: a generator's fitness
// against the same discriminators is the same bits whatever generators
// play beside it, and the reverse; and outputs taken again from `reuse`
// give the same bits as outputs computed.
TEST(PairGame, APairsLossesDoNotDependOnTheOtherPlayers) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  Fixture f(three_pairs());
  Players p = players(f);
  const auto lock = lock_torch_generator();
  PairGame game;
  game.play(p.g, p.d, p.real, p.z, BceForm::kPyTorch, nullptr);
  const std::vector<double> all_g = fitness(p.g), all_d = fitness(p.d);
  game.play({p.g[1]}, p.d, p.real, p.z, BceForm::kPyTorch, nullptr);
  EXPECT_EQ(p.g[1]->fitness, all_g[1]);
  game.play(p.g, {p.d[2]}, p.real, p.z, BceForm::kPyTorch, nullptr);
  EXPECT_EQ(p.d[2]->fitness, all_d[2]);
  PlayedOutputs reuse;
  game.play(p.g, p.d, p.real, p.z, BceForm::kPyTorch, &reuse);
  game.play(p.g, p.d, p.real, p.z, BceForm::kPyTorch, &reuse);  // everything taken again
  EXPECT_EQ(fitness(p.g), all_g);
  EXPECT_EQ(fitness(p.d), all_d);
}

}  // namespace
}  // namespace cellgan
