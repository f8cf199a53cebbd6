// One generation of one cell (docs/architecture.md, "One generation of one cell"): the mutated learning rate reaches
// Adam, generations are deterministic, the R1 penalty reaches the
// discriminators, replacement rules hold, mixture weights stay a
// distribution, non-finite individuals never enter, and the phase seconds
// are the seven named phases.
#include "worker/cell_trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "common/bytes.h"
#include "common/nn/training_data.h"
#include "tests/worker/toy_cell_fixture.h"

namespace cellgan {
namespace {

using worker_test::Fixture;
using worker_test::toy_config;

TEST(CellTrainer, MutatedLearningRateReachesAdam) {
  Config c = toy_config();
  c.training.mutation_probability = 1.0;
  c.training.mutation_scale = 1.0;  // large, so the change is unmistakable
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  Individual& g = s.generators[0];
  const double before = g.learning_rate();
  SplitMix64 rng(5);
  f.trainer.mutate_learning_rate(g, rng);
  const double after = g.learning_rate();
  ASSERT_GT(std::abs(after - before), 1e-5);
  for (auto& group : g.optimizer().param_groups()) EXPECT_DOUBLE_EQ(group.options().get_lr(), after);
  // Adam's first step moves each weight by about lr (m/sqrt(v) = +-1), so
  // the size of the step shows which lr the optimizer really used.
  const torch::Tensor w0 = g.module().parameters()[0].detach().clone();
  g.optimizer().zero_grad();
  g.generator()->forward(torch::randn({32, 4})).sum().backward();
  g.optimizer().step();
  const double moved = (g.module().parameters()[0].detach() - w0).abs().max().item<double>();
  EXPECT_NEAR(moved, after, after * 0.01);
  EXPECT_GT(std::abs(moved - before), before * 0.05);
}

// training.mutated_lr_reaches_adam: false. The lr mutates (the same draws)
// but Adam steps with learning_rate, also after a round trip through bytes,
// which gives Adam the recorded lr until the next mutate call.
TEST(CellTrainer, MutatedLearningRateCanStayOutOfAdam) {
  Config c = toy_config();
  c.training.mutation_probability = 1.0;
  c.training.mutation_scale = 1.0;
  c.training.mutated_lr_reaches_adam = false;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  Individual& g = s.generators[0];
  const double lr0 = c.training.learning_rate;
  SplitMix64 rng(5);
  f.trainer.mutate_learning_rate(g, rng);
  const double mutated = g.learning_rate();
  ASSERT_GT(std::abs(mutated - lr0), 1e-5);
  EXPECT_DOUBLE_EQ(g.adam_learning_rate(), lr0);
  // The same draws as with the lr in Adam.
  Config reaching = c;
  reaching.training.mutated_lr_reaches_adam = true;
  Fixture r(reaching);
  CellState rs = r.trainer.initial_state(4, 4);
  SplitMix64 same(5);
  r.trainer.mutate_learning_rate(rs.generators[0], same);
  EXPECT_DOUBLE_EQ(rs.generators[0].learning_rate(), mutated);
  // A copy carries the mutated lr into Adam; the next call (no mutation) puts lr0 back.
  Individual copy = g.clone();
  EXPECT_DOUBLE_EQ(copy.adam_learning_rate(), mutated);
  Config never = c;
  never.training.mutation_probability = 0.0;
  Fixture n(never);
  n.trainer.mutate_learning_rate(copy, rng);
  EXPECT_DOUBLE_EQ(copy.learning_rate(), mutated);
  EXPECT_DOUBLE_EQ(copy.adam_learning_rate(), lr0);
  // And Adam's first step is lr0 in size, not the mutated lr.
  const torch::Tensor w0 = copy.module().parameters()[0].detach().clone();
  copy.optimizer().zero_grad();
  copy.generator()->forward(torch::randn({32, 4})).sum().backward();
  copy.optimizer().step();
  const double moved = (copy.module().parameters()[0].detach() - w0).abs().max().item<double>();
  EXPECT_NEAR(moved, lr0, lr0 * 0.01);
}

// An isolated cell (per_class) scores its one-generator mixture only on
// preview generations and the last; a cell of the grid, every generation.
// Both train the same, and record the same losses.
TEST(CellTrainer, AnIsolatedCellScoresItsOneGeneratorOnPreviewGenerations) {
  Config c = toy_config();
  c.training.generations = 3;
  c.training.population_size = 1;
  c.evaluation.preview_every = 2;
  Fixture f(c);
  CellTrainer isolated(f.config, f.data, *f.scorer, /*isolated=*/true);
  CellState grid_cell = f.trainer.initial_state(4, 0);
  CellState alone = isolated.initial_state(4, 0);
  for (int gen = 1; gen <= 3; ++gen) {
    const GenerationRecord full = f.trainer.run_generation(grid_cell, {});
    const GenerationRecord r = isolated.run_generation(alone, {});
    EXPECT_FALSE(full.scores.empty());
    EXPECT_EQ(r.scores.empty(), gen == 1) << "generation " << gen;  // scored on 2 (preview_every) and 3 (the last)
    if (!r.scores.empty()) {
      EXPECT_EQ(r.scores, full.scores);
    }
    ASSERT_TRUE(std::isfinite(r.generator_loss) && std::isfinite(r.discriminator_loss));
    EXPECT_EQ(r.generator_loss, full.generator_loss);
    EXPECT_EQ(r.discriminator_loss, full.discriminator_loss);
  }
  EXPECT_EQ(alone.generators[0].encode(), grid_cell.generators[0].encode());
}

TEST(CellTrainer, ZeroProbabilityNeverMutates) {
  Config c = toy_config();
  c.training.mutation_probability = 0.0;
  Fixture f(c);
  CellState s = f.trainer.initial_state(0, 4);
  SplitMix64 rng(5);
  for (int i = 0; i < 100; ++i) f.trainer.mutate_learning_rate(s.generators[0], rng);
  EXPECT_DOUBLE_EQ(s.generators[0].learning_rate(), c.training.learning_rate);
}

TEST(CellTrainer, GenerationIsDeterministic) {
  Fixture f(toy_config());
  std::vector<std::vector<std::uint8_t>> results;
  std::vector<double> losses;
  for (int run = 0; run < 2; ++run) {
    CellState s = f.trainer.initial_state(4, 4);
    for (int gen = 0; gen < 2; ++gen) {
      const GenerationRecord r = f.trainer.run_generation(s, f.neighbours());
      losses.push_back(r.generator_loss);
    }
    results.push_back(s.centre_generator().encode());
    EXPECT_EQ(s.generation, 2);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(losses[0], losses[2]);
  EXPECT_EQ(losses[1], losses[3]);
}

TEST(CellTrainer, R1PenaltyReachesTheTrainedDiscriminator) {
  std::vector<std::vector<std::uint8_t>> trained;
  for (double gamma : {0.0, 10.0, 10.0}) {
    Config c = toy_config();
    c.training.r1_penalty = gamma;
    Fixture f(c);
    CellState s = f.trainer.initial_state(4, 4);
    f.trainer.run_generation(s, f.neighbours());
    trained.push_back(s.centre_discriminator().encode());
  }
  EXPECT_NE(trained[0], trained[1]);  // the penalty changed the discriminator's steps
  EXPECT_EQ(trained[1], trained[2]);  // and is as deterministic as the rest
}

TEST(CellTrainer, AlwaysRuleReplacesAndRecordsIt) {
  Config c = toy_config();
  c.training.replacement = ReplacementRule::kAlways;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  const auto before = s.generators[0].encode();
  const GenerationRecord r = f.trainer.run_generation(s, f.neighbours());
  EXPECT_EQ(r.generators_replaced, 1);
  EXPECT_EQ(r.discriminators_replaced, 1);
  EXPECT_NE(s.generators[0].encode(), before);
  EXPECT_EQ(s.generators[0].source_cell, 4);
}

TEST(CellTrainer, IfBetterRuleKeepsTheLocalIndividualUnlessBeaten) {
  Config c = toy_config();
  c.training.replacement = ReplacementRule::kIfBetter;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  for (int gen = 0; gen < 3; ++gen) {
    const auto before = s.generators[0].encode();
    const GenerationRecord r = f.trainer.run_generation(s, f.neighbours());
    ASSERT_TRUE(r.generators_replaced == 0 || r.generators_replaced == 1);
    // Kept means byte-identical apart from the refreshed fitness.
    Individual kept = Individual::decode(before, s.generators[0].shape(), {});
    kept.fitness = s.generators[0].fitness;
    if (r.generators_replaced == 0) EXPECT_EQ(kept.encode(), s.generators[0].encode());
    else EXPECT_NE(kept.encode(), s.generators[0].encode());
  }
}

TEST(CellTrainer, MixtureWeightsStayADistribution) {
  Config c = toy_config();
  c.training.mixture_sigma = 0.5;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  ASSERT_EQ(s.mixture_weights.size(), 5u);
  bool moved = false;
  for (int gen = 0; gen < 3; ++gen) {
    const GenerationRecord r = f.trainer.run_generation(s, f.neighbours());
    moved = moved || r.mixture_improved;
    EXPECT_NEAR(std::accumulate(s.mixture_weights.begin(), s.mixture_weights.end(), 0.0), 1.0, 1e-12);
    for (double w : s.mixture_weights) EXPECT_GE(w, 0.0);
    EXPECT_TRUE(std::isfinite(r.scores.at("frechet_2d")));
    EXPECT_EQ(r.seconds.count("train"), 1u);
  }
  Ensemble e = CellTrainer::ensemble(s);
  EXPECT_EQ(e.generators.size(), 5u);
  EXPECT_EQ(e.weights, s.mixture_weights);
  // Written straight from the state, the bytes are the copied ensemble's.
  ByteWriter w;
  CellTrainer::encode_ensemble(s, w);
  EXPECT_EQ(w.bytes(), e.encode());
  EXPECT_GE(CellTrainer::encoded_ensemble_bound(s), w.size());
  if (moved) {
    EXPECT_NE(s.mixture_weights, std::vector<double>(5, 0.2));
  }
}

TEST(CellTrainer, NonFiniteNeighboursNeverEnterThePopulation) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(4, 4);
  for (auto& c : f.centres) {
    Individual g = Individual::decode(c.generator, s.generators[0].shape(), {});
    torch::NoGradGuard no_grad;
    for (auto& p : g.module().parameters()) p.fill_(std::numeric_limits<float>::quiet_NaN());
    c.generator = g.encode();
  }
  const GenerationRecord r = f.trainer.run_generation(s, f.neighbours());
  EXPECT_TRUE(s.generators[0].is_finite());
  EXPECT_TRUE(std::isfinite(s.generators[0].fitness));
  // Nor the mixture: their slots get no weight.
  ASSERT_EQ(s.mixture_weights.size(), 5u);
  for (std::size_t k = 1; k < 5; ++k) EXPECT_EQ(s.mixture_weights[k], 0.0);
  EXPECT_DOUBLE_EQ(s.mixture_weights[0], 1.0);
  EXPECT_TRUE(std::isfinite(r.scores.at(objective_name(f.config))));
  std::size_t left_out = 0;
  for (const std::string& line : r.events)
    if (line.find("cell 4, generation 1: cell ") == 0 && line.find("centre generator non-finite: left out") !=
                                                             std::string::npos)
      ++left_out;
  EXPECT_EQ(left_out, 4u);
}

TEST(CellTrainer, ThePoisonOfTheFaultNanIsReplacedFromTheNeighbourhoodAndRecorded) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(4, 4);
  f.trainer.run_generation(s, f.neighbours());
  CellFaults faults;
  faults.poison_generators = true;
  const GenerationRecord r = f.trainer.run_generation(s, f.neighbours(), faults);
  EXPECT_TRUE(s.generators[0].is_finite());
  EXPECT_TRUE(std::isfinite(r.generator_loss));
  EXPECT_TRUE(std::isfinite(r.scores.at(objective_name(f.config))));
  ASSERT_GE(r.events.size(), 2u);
  EXPECT_EQ(r.events[0], "cell 4, generation 2: fault nan: the cell's generators poisoned (NaN weights)");
  EXPECT_EQ(r.events[1],
            "cell 4, generation 2: generator 0 non-finite: discarded, replaced by a copy of cell 1's centre generator");
  // A generation without faults says nothing.
  EXPECT_TRUE(f.trainer.run_generation(s, f.neighbours()).events.empty());
}

TEST(CellTrainer, CopiesThatDivergeAreDiscardedAndTheCellStaysFinite) {
  Config c = toy_config();
  c.training.learning_rate = 1e30;  // every Adam step throws the weights out of range
  c.training.mutation_probability = 0.0;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  const GenerationRecord r = f.trainer.run_generation(s, f.neighbours());
  EXPECT_EQ(r.generators_replaced, 0);
  EXPECT_TRUE(s.generators[0].is_finite());
  EXPECT_TRUE(s.discriminators[0].is_finite());
  bool discarded = false;
  for (const std::string& line : r.events) discarded |= line.find(": discarded") != std::string::npos;
  EXPECT_TRUE(discarded) << fmt::format("{}", fmt::join(r.events, "\n"));
}

TEST(CellTrainer, ANeighbourThatWinsBringsItsAdamState) {
  Config c = toy_config();
  c.training.tournament_size = 5;
  Fixture f(c);
  // Neighbours with 7 Adam steps behind them.
  for (auto& centre : f.centres) {
    Individual g = Individual::decode(centre.generator, network_shape(c), {});
    for (int step = 0; step < 7; ++step) {
      g.optimizer().zero_grad();
      g.generator()->forward(torch::randn({8, c.network.latent_dim})).sum().backward();
      g.optimizer().step();
    }
    centre.generator = g.encode();
  }
  CellState s = f.trainer.initial_state(4, 4);
  {  // a local generator that can never win a tournament
    torch::NoGradGuard no_grad;
    for (auto& p : s.generators[0].module().parameters()) p.fill_(std::numeric_limits<float>::quiet_NaN());
  }
  f.trainer.run_generation(s, f.neighbours());
  ASSERT_TRUE(s.generators[0].is_finite());
  // Every parameter of the trained winner has stepped 7 + 5 times.
  const std::vector<std::uint8_t> bytes = s.generators[0].encode();
  Individual reread = Individual::decode(bytes, network_shape(c), {});
  const auto& state = reread.optimizer().state();
  ASSERT_FALSE(state.empty());
  for (const auto& [key, st] : state)
    EXPECT_EQ(static_cast<const torch::optim::AdamParamState&>(*st).step(), 7 + c.training.batches_per_generation);
}

TEST(CellTrainer, PhaseSecondsAreTheSevenNamedPhases) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(4, 4);
  const std::set<std::string> phases{"evaluate", "gather", "idle", "mutate", "replace", "select", "train"};
  for (int gen = 0; gen < 2; ++gen) {
    const GenerationRecord r = f.trainer.run_generation(s, f.neighbours());
    std::set<std::string> keys;
    for (const auto& [phase, seconds] : r.seconds) {
      keys.insert(phase);
      EXPECT_TRUE(std::isfinite(seconds)) << phase;
      EXPECT_GE(seconds, 0.0) << phase;
    }
    EXPECT_EQ(keys, phases);
    EXPECT_EQ(r.seconds.at("idle"), 0.0);  // the worker loop's to fill
    EXPECT_GT(r.seconds.at("train"), 0.0);
    EXPECT_GT(r.seconds.at("evaluate"), 0.0);
  }
}

}  // namespace
}  // namespace cellgan
