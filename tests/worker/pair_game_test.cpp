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

// Two cells' games in one play_cells (cells of 3 Gs against 2 Ds and 2 Gs
// against 3 Ds, each on its own batches, one with outputs to take again):
// every fitness is the bits of its cell's game played alone, and each
// cell's `reuse` holds what it holds after playing alone.
TEST(PairGame, CellsPlayedTogetherGiveTheBitsOfEachCellPlayedAlone) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  Fixture f(three_pairs());
  Players a = players(f);
  Players b = players(f);
  b.real = b.real.flip(0).contiguous();  // batches of its own
  b.z = -b.z;
  const std::vector<Individual*> a_g = a.g, a_d{a.d[0], a.d[1]};
  const std::vector<Individual*> b_g{b.g[0], b.g[2]}, b_d = b.d;
  const auto lock = lock_torch_generator();
  PairGame game;
  PlayedOutputs a_known;
  game.play({a_g[1]}, {a_d[0]}, a.real, a.z, BceForm::kPyTorch, &a_known);  // a's G 1 and D 0 already played
  PlayedOutputs a_alone = a_known, b_alone;
  game.play(a_g, a_d, a.real, a.z, BceForm::kPyTorch, &a_alone);
  game.play(b_g, b_d, b.real, b.z, BceForm::kPyTorch, &b_alone);
  const std::vector<double> alone[] = {fitness(a_g), fitness(a_d), fitness(b_g), fitness(b_d)};
  for (Individual* i : {a_g[0], a_g[1], a_g[2], a_d[0], a_d[1], b_g[0], b_g[1], b_d[0], b_d[1], b_d[2]})
    i->fitness = 0.0;

  PlayedOutputs b_together;
  game.play_cells({{a_g, a_d, a.real, a.z, &a_known}, {b_g, b_d, b.real, b.z, &b_together}}, BceForm::kPyTorch);
  EXPECT_EQ(fitness(a_g), alone[0]);
  EXPECT_EQ(fitness(a_d), alone[1]);
  EXPECT_EQ(fitness(b_g), alone[2]);
  EXPECT_EQ(fitness(b_d), alone[3]);
  for (const auto& [known, played] : {std::pair{&a_known, &a_alone}, std::pair{&b_together, &b_alone}}) {
    ASSERT_EQ(known->fakes.size(), played->fakes.size());
    ASSERT_EQ(known->d_real.size(), played->d_real.size());
    for (const auto& [who, fake] : played->fakes) EXPECT_TRUE(torch::equal(known->fakes.at(who), fake));
    for (const auto& [who, out] : played->d_real) EXPECT_TRUE(torch::equal(known->d_real.at(who), out));
  }
  EXPECT_NE(alone[2][0], alone[0][0]);  // the same G, against other Ds on other batches
}

// Cells that agree in their numbers of players and rows have their losses
// taken in one set of kernels: every fitness has the bits of its cell
// played alone, each generator with its own mustangs loss kind.
TEST(PairGame, CellsWhoseLossesAreTakenTogetherGetTheBitsOfEachCellAlone) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  Fixture f(three_pairs());
  Players a = players(f);
  Players b = players(f);
  b.real = b.real.flip(0).contiguous();
  b.z = -b.z;
  const auto lock = lock_torch_generator();
  PairGame alone_game;
  alone_game.play(a.g, a.d, a.real, a.z, BceForm::kPyTorch, nullptr);
  alone_game.play(b.g, b.d, b.real, b.z, BceForm::kPyTorch, nullptr);
  const std::vector<double> alone[] = {fitness(a.g), fitness(a.d), fitness(b.g), fitness(b.d)};
  for (const std::vector<Individual*>* who : {&a.g, &a.d, &b.g, &b.d})
    for (Individual* i : *who) i->fitness = 0.0;
  PairGame game;
  game.play_cells({{a.g, a.d, a.real, a.z, nullptr}, {b.g, b.d, b.real, b.z, nullptr}}, BceForm::kPyTorch);
  const std::vector<double> together[] = {fitness(a.g), fitness(a.d), fitness(b.g), fitness(b.d)};
  for (int k = 0; k < 4; ++k)
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(std::isfinite(together[k][i]));
      EXPECT_EQ(together[k][i], alone[k][i]) << "list " << k << ", player " << i;
    }
  EXPECT_NE(alone[2][0], alone[0][0]);
}

}  // namespace
}  // namespace cellgan
