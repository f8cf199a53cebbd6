// The steps of one generation (generation_steps.h) one by one: seeding,
// tournaments, training with mutation, scoring the trained copies,
// replacement and the mixture ES. The whole generation is tested in
// cell_trainer_test.cpp.
#include "worker/generation_steps.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <utility>

#include "tests/worker/toy_cell_fixture.h"
#include "worker/lockstep_training.h"

namespace cellgan {
namespace {

using worker_test::Fixture;
using worker_test::toy_config;

// Individuals of `cell` with the given fitness values, one per value.
std::vector<Individual> generators_with_fitness(Fixture& f, int cell, const std::vector<double>& fitness) {
  std::vector<Individual> out;
  for (double value : fitness) {
    CellState s = f.trainer.initial_state(cell, 4);
    out.push_back(std::move(s.generators[0]));
    out.back().fitness = value;
    ++cell;  // different weights for each
  }
  return out;
}

std::vector<std::vector<std::uint8_t>> encoded(const std::vector<Individual>& individuals) {
  std::vector<std::vector<std::uint8_t>> out;
  for (const Individual& i : individuals) out.push_back(i.encode());
  return out;
}

TEST(ReplaceWorst, IfBetterKeepsALocalIndividualThatIsAtLeastAsGood) {
  Fixture f(toy_config());
  std::vector<Individual> local = generators_with_fitness(f, 0, {0.5, 0.9, 0.4});
  std::vector<Individual> copies = generators_with_fitness(f, 10, {1.2, 0.7, 0.5});
  const auto local_before = encoded(local);
  const auto copies_before = encoded(copies);
  // Worst local first (0.9, 0.5, 0.4) against the best copy first (0.5,
  // 0.7, 1.2): 0.5 < 0.9 replaces; 0.7 is not below 0.5; 0.7 not below 0.4.
  EXPECT_EQ(replace_worst(local, copies, 3, ReplacementRule::kIfBetter), 1);
  EXPECT_EQ(local[1].encode(), copies_before[2]);
  EXPECT_EQ(local[0].encode(), local_before[0]);
  EXPECT_EQ(local[2].encode(), local_before[2]);
  // A tie is not better.
  std::vector<Individual> tied_local = generators_with_fitness(f, 0, {0.5});
  std::vector<Individual> tied_copy = generators_with_fitness(f, 10, {0.5});
  EXPECT_EQ(replace_worst(tied_local, tied_copy, 1, ReplacementRule::kIfBetter), 0);
  EXPECT_EQ(tied_local[0].encode(), local_before[0]);
}

TEST(ReplaceWorst, AlwaysReplacesTheWorstWithTheBest) {
  Fixture f(toy_config());
  std::vector<Individual> local = generators_with_fitness(f, 0, {0.5, 0.9, 0.4});
  std::vector<Individual> copies = generators_with_fitness(f, 10, {1.2, 0.7, 3.0});
  const auto local_before = encoded(local);
  const auto copies_before = encoded(copies);
  EXPECT_EQ(replace_worst(local, copies, 2, ReplacementRule::kAlways), 2);
  EXPECT_EQ(local[1].encode(), copies_before[1]);  // worst local <- best copy
  EXPECT_EQ(local[0].encode(), copies_before[0]);  // next worst <- next best, though worse
  EXPECT_EQ(local[2].encode(), local_before[2]);   // beyond n_replacements
}

TEST(ReplaceWorst, NonFiniteCopiesAreSkippedAndANaNLocalCountsAsWorst) {
  Fixture f(toy_config());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Individual> local = generators_with_fitness(f, 0, {0.5, nan});
  std::vector<Individual> copies = generators_with_fitness(f, 10, {0.1, nan, 0.3});
  {  // the best copy by fitness has non-finite weights
    torch::NoGradGuard no_grad;
    copies[0].module().parameters()[0].fill_(std::numeric_limits<float>::infinity());
  }
  const auto local_before = encoded(local);
  const auto copies_before = encoded(copies);
  EXPECT_EQ(replace_worst(local, copies, 2, ReplacementRule::kIfBetter), 1);
  EXPECT_EQ(local[1].encode(), copies_before[2]);  // the NaN local went; the finite 0.3 copy came
  EXPECT_EQ(local[0].encode(), local_before[0]);   // no finite copy is left for it
  EXPECT_TRUE(local[0].is_finite() && local[1].is_finite());
}

// Winners are snapshots of the best drawn: their bytes, and no copy of the
// pool's weights; the pool's being replaced leaves them as they were.
TEST(TournamentWinners, AreSnapshotsOfTheBestDrawn) {
  Fixture f(toy_config());
  std::vector<Individual> held = generators_with_fitness(f, 0, {0.3, std::numeric_limits<double>::quiet_NaN(), 0.1});
  std::vector<Individual*> pool;
  for (Individual& i : held) pool.push_back(&i);
  const std::vector<const NeighbourCentre*> origin(pool.size(), nullptr);
  SplitMix64 rng(9);
  // 64 draws miss the best of 3 with probability (2/3)^64.
  std::vector<Individual> winners = tournament_winners(pool, origin, 2, 64, rng);
  ASSERT_EQ(winners.size(), 2u);
  for (Individual& w : winners) {
    EXPECT_EQ(w.encode(), held[2].encode());
    EXPECT_EQ(w.fitness, 0.1);
  }
  EXPECT_EQ(winners[0].module().parameters()[0].data_ptr(), held[2].module().parameters()[0].data_ptr());
  // Tournaments of one are uniform draws: over many, every index wins, NaN too.
  std::set<std::string> seen;
  for (const Individual& w : tournament_winners(pool, origin, 60, 1, rng)) seen.insert(std::to_string(w.fitness));
  EXPECT_EQ(seen.size(), 3u);
  const std::vector<std::uint8_t> best = held[2].encode();
  held[2] = held[0].clone();  // replaced whole, as replace_worst() replaces
  for (const Individual& w : winners) EXPECT_EQ(w.encode(), best);
}

TEST(SeedGeneration, DependsOnTheCellAndTheGenerationOnly) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(4, 4);
  const auto draws = [&](const CellState& state) {
    GenerationWorkingSet work;
    seed_generation(f.config, state, work);
    return std::make_pair(torch::rand({4}, work.generator), work.rng.next());
  };
  const auto first = draws(s);
  torch::rand({100});  // draws in between change nothing
  const auto again = draws(s);
  EXPECT_TRUE(torch::equal(first.first, again.first));
  EXPECT_EQ(first.second, again.second);
  s.generation += 1;
  const auto next = draws(s);
  EXPECT_FALSE(torch::equal(first.first, next.first));
  EXPECT_NE(first.second, next.second);
  CellState other = f.trainer.initial_state(5, 4);
  EXPECT_NE(draws(other).second, first.second);
}

// The latent vectors of training come from a stream of the cell's own
// seeded from (seed, cell, generation): on the CPU work.generator itself,
// elsewhere a generator on the device seeded with work.latent_seed.
TEST(SeedGeneration, TheLatentStreamIsTheCellsOwnSeededFromSeedCellAndGeneration) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(6, 4);
  s.generation = 3;
  GenerationWorkingSet work;
  seed_generation(f.config, s, work);
  const std::uint64_t stream = (std::uint64_t{6} << 32) ^ std::uint64_t{3};
  EXPECT_EQ(work.latent_seed, derive_seed(f.config.seed, Stream::kCellTraining, stream ^ (1ULL << 61)));
  EXPECT_EQ(work.global_seed, derive_seed(f.config.seed, Stream::kCellTraining, stream ^ (1ULL << 62)));
  EXPECT_NE(work.latent_seed, work.global_seed);
  EXPECT_TRUE(latent_generator(work, torch::kCPU) == work.generator);  // the same generator, not a copy
  GenerationWorkingSet next;
  s.generation = 4;
  seed_generation(f.config, s, next);
  EXPECT_NE(next.latent_seed, work.latent_seed);
}

// Two clones of the cell's first pair as the selected copies, and the
// generation seeded.
void select_two_pairs(Fixture& f, CellState& s, GenerationWorkingSet& work) {
  for (int k = 0; k < 2; ++k) {
    work.selected_generators.push_back(s.generators[0].clone());
    work.selected_discriminators.push_back(s.discriminators[0].clone());
  }
  seed_generation(f.config, s, work);
}

// Steps 4 and 5 of the cell in `work` (lockstep_training.h), a stack of its own.
double train_copies(const TrainingConfig& training, const TrainingData& data, std::int64_t batches,
                    std::int64_t latent_dim, int cell, GenerationWorkingSet& work) {
  return train_in_lockstep(training, data, batches, latent_dim, {{cell, &work, nullptr}}).front();
}

std::int64_t adam_steps(Individual& individual) {
  const auto& state = individual.optimizer().state();
  if (state.empty()) return 0;
  return static_cast<const torch::optim::AdamParamState&>(*state.begin()->second).step();
}

TEST(Train, StepsEveryCopyAndTheDiscriminatorsEverySkipPlusOneBatches) {
  Config c = toy_config();
  c.training.discriminator_skip = 1;
  c.training.mutation_probability = 1.0;
  c.training.mutation_scale = 1.0;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  GenerationWorkingSet work;
  select_two_pairs(f, s, work);
  const double mutating = train_copies(c.training, f.data, /*batches=*/5, c.network.latent_dim, /*cell=*/8, work);
  EXPECT_GE(mutating, 0.0);
  for (std::vector<Individual>* trained : {&work.selected_generators, &work.selected_discriminators}) {
    const bool is_g = trained == &work.selected_generators;
    for (Individual& i : *trained) {
      EXPECT_EQ(adam_steps(i), is_g ? 5 : 3);  // D on batches 0, 2, 4
      EXPECT_EQ(i.source_cell, 8);
      EXPECT_NE(i.learning_rate(), c.training.learning_rate);  // mutated before every step
      for (const auto& p : i.module().parameters()) EXPECT_FALSE(p.grad().defined());
    }
  }
}

TEST(Train, IsRepeatableFromTheSameSeed) {
  Fixture f(toy_config());
  std::vector<std::vector<std::uint8_t>> out;
  for (int run = 0; run < 2; ++run) {
    CellState s = f.trainer.initial_state(4, 4);
    GenerationWorkingSet work;
    select_two_pairs(f, s, work);
    train_copies(f.config.training, f.data, 3, f.config.network.latent_dim, 4, work);
    out.push_back(work.selected_generators[1].encode());
  }
  EXPECT_EQ(out[0], out[1]);
}

TEST(ScoreTrainedCopies, ScoresTheCopiesAndLeavesThePoolAsItWas) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(4, 4);
  const std::vector<NeighbourCentre> neighbours = f.neighbours();
  GenerationWorkingSet work;
  gather_neighbourhood(s, neighbours, network_shape(f.config), {}, work);
  ASSERT_EQ(work.generator_pool.size(), 5u);
  ASSERT_EQ(work.generator_origin[0], nullptr);
  ASSERT_EQ(work.generator_origin[1], &neighbours[0]);
  seed_generation(f.config, s, work);
  evaluate_fitness(f.config.training, f.data, f.config.network.latent_dim, work);
  for (Individual* i : work.generator_pool) ASSERT_TRUE(std::isfinite(i->fitness));
  select_by_tournament(f.config.training, work);
  ASSERT_EQ(work.selected_generators.size(), 1u);
  const double selected_fitness = work.selected_generators[0].fitness;
  train_copies(f.config.training, f.data, 5, f.config.network.latent_dim, 4, work);
  std::vector<double> pool_before;
  for (Individual* i : work.generator_pool) pool_before.push_back(i->fitness);
  for (Individual* i : work.discriminator_pool) pool_before.push_back(i->fitness);
  score_trained_copies(BceForm::kClamped, work);
  std::vector<double> pool_after;
  for (Individual* i : work.generator_pool) pool_after.push_back(i->fitness);
  for (Individual* i : work.discriminator_pool) pool_after.push_back(i->fitness);
  EXPECT_EQ(pool_before, pool_after);
  EXPECT_TRUE(std::isfinite(work.selected_generators[0].fitness));
  EXPECT_TRUE(std::isfinite(work.selected_discriminators[0].fitness));
  EXPECT_NE(work.selected_generators[0].fitness, selected_fitness);  // trained, so rescored
}

// A generation's steps up to scoring the trained copies: gather, seed,
// fitness, tournaments, and `batches` batches of training.
void train_up_to_scoring(Fixture& f, CellState& s, const std::vector<NeighbourCentre>& neighbours,
                         std::int64_t batches, GenerationWorkingSet& work) {
  gather_neighbourhood(s, neighbours, network_shape(f.config), {}, work);
  seed_generation(f.config, s, work);
  evaluate_fitness(f.config.training, f.data, f.config.network.latent_dim, work);
  select_by_tournament(f.config.training, work);
  train_copies(f.config.training, f.data, batches, f.config.network.latent_dim, 4, work);
}

// The copies' scores taking the pool's outputs from evaluate_fitness (its
// fakes, its discriminators on the real batch) are those computed afresh,
// to the bit.
TEST(ScoreTrainedCopies, ThePoolsOutputsTakenAgainGiveTheSameScoresToTheBit) {
  std::vector<std::vector<double>> scores;
  for (const bool reuse : {true, false}) {
    Fixture f(toy_config());
    CellState s = f.trainer.initial_state(4, 4);
    const std::vector<NeighbourCentre> neighbours = f.neighbours();
    GenerationWorkingSet work;
    train_up_to_scoring(f, s, neighbours, 5, work);
    EXPECT_EQ(work.played.fakes.size(), 5u) << "every pool generator's fakes kept";
    EXPECT_EQ(work.played.d_real.size(), 5u) << "every pool discriminator's output on the real batch kept";
    if (!reuse) work.played = PlayedOutputs{};
    score_trained_copies(BceForm::kClamped, work);
    scores.push_back({work.selected_generators[0].fitness, work.selected_discriminators[0].fitness});
  }
  EXPECT_EQ(scores[0], scores[1]);
}

// A game that decides nothing (one G and one D, replacement always) is not
// played: its samples are drawn all the same, so training is the same to
// the bit, and the copies' fitness is then their mean loss in training.
TEST(DrawFitnessSamples, TrainingIsTheSameWithOrWithoutTheGame) {
  std::vector<std::vector<torch::Tensor>> trained;
  std::vector<double> fitness;
  for (const bool play : {true, false}) {
    Fixture f(toy_config());
    CellState s = f.trainer.initial_state(4, 0);
    GenerationWorkingSet work;
    gather_neighbourhood(s, {}, network_shape(f.config), {}, work);
    ASSERT_TRUE(game_decides_nothing(f.config.training, work));
    ASSERT_TRUE(copies_score_decides_nothing(f.config.training));
    seed_generation(f.config, s, work);
    if (play)
      evaluate_fitness(f.config.training, f.data, f.config.network.latent_dim, work);
    else
      draw_fitness_samples(f.config.training, f.data, f.config.network.latent_dim, work);
    EXPECT_EQ(std::isfinite(s.generators[0].fitness), play);
    select_by_tournament(f.config.training, work);
    train_copies(f.config.training, f.data, 5, f.config.network.latent_dim, 4, work);
    EXPECT_EQ(work.training_generator_losses.size(), 1u);  // kept: the copies' score decides nothing
    if (play)
      score_trained_copies(BceForm::kClamped, work);
    else
      take_training_losses(work);
    trained.emplace_back();
    for (Individual* copy : {&work.selected_generators[0], &work.selected_discriminators[0]}) {
      for (const auto& p : copy->module().parameters()) trained.back().push_back(p.detach().clone());
      fitness.push_back(copy->fitness);
    }
  }
  ASSERT_EQ(trained[0].size(), trained[1].size());
  for (std::size_t i = 0; i < trained[0].size(); ++i) EXPECT_TRUE(torch::equal(trained[0][i], trained[1][i]));
  for (const double f : fitness) EXPECT_TRUE(std::isfinite(f));
  EXPECT_NE(fitness[0], fitness[2]);  // the game's score, then the mean in training
  // A BCE loss of a G against a D that is not yet trained: near log 2, nowhere near 0.
  EXPECT_GT(fitness[2], 0.3);
  EXPECT_GT(fitness[3], 0.3);
}

// With a population of 2 the tournament and the ordering of the copies decide: both are played.
TEST(DrawFitnessSamples, APopulationOfTwoPlaysEveryGame) {
  Config c = toy_config();
  c.training.population_size = 2;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 0);
  GenerationWorkingSet work;
  gather_neighbourhood(s, {}, network_shape(f.config), {}, work);
  EXPECT_FALSE(game_decides_nothing(f.config.training, work));
  EXPECT_FALSE(copies_score_decides_nothing(f.config.training));
  c.training.population_size = 1;
  c.training.replacement = ReplacementRule::kIfBetter;
  EXPECT_FALSE(copies_score_decides_nothing(c.training));
}

TEST(EvolveMixture, KeepsAPreviewOnPreviewGenerationsOnly) {
  Config c = toy_config();
  c.evaluation.preview_every = 2;
  c.training.mixture_sigma = 0.3;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  f.trainer.run_generation(s, f.neighbours());  // gathers the neighbours' generators
  ASSERT_EQ(s.neighbour_generators.size(), 4u);
  const std::string objective = objective_name(c);
  for (std::int64_t generation : {2, 3}) {
    SplitMix64 rng(21);
    const MixtureOutcome out = evolve_mixture(c, *f.scorer, objective, generation, s, rng);
    EXPECT_EQ(out.preview.size(), generation == 2 ? static_cast<std::size_t>(c.training.score_samples * 2) : 0u);
    EXPECT_EQ(out.scores.at(objective), s.mixture_objective);
    EXPECT_NEAR(std::accumulate(s.mixture_weights.begin(), s.mixture_weights.end(), 0.0), 1.0, 1e-12);
  }
}

// ------------------------------------------------ non-finite individuals (docs/operations.md, "Faults: what is survived")

void poison(Individual& individual) {
  torch::NoGradGuard no_grad;
  for (auto& p : individual.module().parameters()) p.fill_(std::numeric_limits<float>::quiet_NaN());
}

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& line : lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

TEST(ReplaceNonFinite, APoisonedLocalBecomesAWholeCopyOfTheFirstFiniteNeighbourCentre) {
  Fixture f(toy_config());
  // The first neighbour's centres are non-finite themselves: skipped.
  for (std::vector<std::uint8_t>* bytes : {&f.centres[0].generator, &f.centres[0].discriminator}) {
    Individual i = Individual::decode(*bytes, network_shape(f.config), {});
    poison(i);
    *bytes = i.encode();
  }
  // The second one's carry Adam state, which the copy must keep.
  {
    Individual g = Individual::decode(f.centres[1].generator, network_shape(f.config), {});
    g.optimizer().zero_grad();
    g.generator()->forward(torch::randn({8, f.config.network.latent_dim})).sum().backward();
    g.optimizer().step();
    f.centres[1].generator = g.encode();
  }
  CellState s = f.trainer.initial_state(4, 4);
  const std::vector<std::uint8_t> local_d = s.discriminators[0].encode();
  poison_generators(s);
  ASSERT_FALSE(s.generators[0].is_finite());
  GenerationWorkingSet work;
  replace_non_finite(s, f.neighbours(), network_shape(f.config), {}, work);
  EXPECT_EQ(s.generators[0].encode(), f.centres[1].generator) << "a whole copy, Adam state included";
  EXPECT_EQ(s.discriminators[0].encode(), local_d) << "a finite individual stays as it is";
  ASSERT_EQ(work.events.size(), 1u);
  EXPECT_EQ(work.events[0], "generator 0 non-finite: discarded, replaced by a copy of cell 3's centre generator");
}

// The fault `nan` puts new tensors in the generators: a snapshot taken
// before (a neighbour's read of the cell, a tournament winner) keeps its
// finite weights.
TEST(PoisonGenerators, LeaveSnapshotsTakenBeforeAsTheyWere) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(4, 4);
  const Individual snap = s.generators[0].snapshot();
  const std::vector<std::uint8_t> before = snap.encode();
  poison_generators(s);
  EXPECT_FALSE(s.generators[0].is_finite());
  EXPECT_TRUE(snap.is_finite());
  EXPECT_EQ(snap.encode(), before);
}

TEST(ReplaceNonFinite, WithoutAFiniteNeighbourTheFirstFiniteLocalIsCopiedAndWithNoneItThrows) {
  Config c = toy_config();
  c.training.population_size = 2;
  c.training.n_replacements = 1;
  Fixture f(c);
  for (auto& centre : f.centres) {
    Individual d = Individual::decode(centre.discriminator, network_shape(c), {});
    poison(d);
    centre.discriminator = d.encode();
  }
  CellState s = f.trainer.initial_state(4, 4);
  poison(s.discriminators[0]);
  const std::vector<std::uint8_t> second = s.discriminators[1].encode();
  GenerationWorkingSet work;
  replace_non_finite(s, f.neighbours(), network_shape(c), {}, work);
  EXPECT_EQ(s.discriminators[0].encode(), second);
  EXPECT_TRUE(contains(work.events, "discriminator 0 non-finite: discarded, replaced by a copy of local discriminator "
                                    "1 (no finite neighbour centre)"));
  poison(s.discriminators[0]);
  poison(s.discriminators[1]);
  GenerationWorkingSet again;
  EXPECT_THROW(replace_non_finite(s, f.neighbours(), network_shape(c), {}, again), std::runtime_error);
}

TEST(GatherNeighbourhood, ANonFiniteNeighbourIsNeitherOpponentNorParent) {
  Fixture f(toy_config());
  Individual g = Individual::decode(f.centres[2].generator, network_shape(f.config), {});
  poison(g);
  f.centres[2].generator = g.encode();
  CellState s = f.trainer.initial_state(4, 4);
  const std::vector<NeighbourCentre> neighbours = f.neighbours();
  GenerationWorkingSet work;
  gather_neighbourhood(s, neighbours, network_shape(f.config), {}, work);
  EXPECT_EQ(work.generator_pool.size(), 4u);  // 1 local + 3 of the 4 neighbours
  EXPECT_EQ(work.discriminator_pool.size(), 5u);
  for (Individual* i : work.generator_pool) EXPECT_TRUE(i->is_finite());
  EXPECT_EQ(work.neighbour_generators.size(), 4u) << "the mixture keeps the slot";
  EXPECT_TRUE(contains(work.events, "cell 5's centre generator non-finite: left out of the neighbourhood"));
}

TEST(ScoreTrainedCopies, ACopyThatMetANonFiniteLossIsDiscarded) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(4, 4);
  const std::vector<NeighbourCentre> neighbours = f.neighbours();
  GenerationWorkingSet work;
  train_up_to_scoring(f, s, neighbours, 2, work);
  ASSERT_EQ(work.diverged_generators, std::vector<bool>{false});
  work.diverged_generators[0] = true;  // as if one loss had been NaN
  score_trained_copies(BceForm::kClamped, work);
  EXPECT_TRUE(std::isnan(work.selected_generators[0].fitness));
  EXPECT_TRUE(std::isfinite(work.selected_discriminators[0].fitness));
  EXPECT_EQ(work.events, std::vector<std::string>{"trained generator copy 0 has a non-finite loss in training: discarded"});
  const std::vector<std::uint8_t> before = s.generators[0].encode();
  EXPECT_EQ(replace_worst(s.generators, work.selected_generators, 1, ReplacementRule::kAlways), 0);
  EXPECT_EQ(s.generators[0].encode(), before);
}

// Non-finite Adam moments leave the game's score finite: only the check of the weights finds them. The copy's fitness
// becomes NaN, so replace_worst() needs no second look.
TEST(ScoreTrainedCopies, ACopyWithNonFiniteAdamStateIsDiscardedWithANaNFitness) {
  Fixture f(toy_config());
  CellState s = f.trainer.initial_state(4, 4);
  const std::vector<NeighbourCentre> neighbours = f.neighbours();
  GenerationWorkingSet work;
  train_up_to_scoring(f, s, neighbours, 2, work);
  Individual& copy = work.selected_discriminators[0];
  ASSERT_TRUE(copy.moments(0).has_value());
  copy.moments(0)->exp_avg.view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
  score_trained_copies(BceForm::kClamped, work);
  EXPECT_TRUE(std::isnan(copy.fitness));
  EXPECT_TRUE(std::isfinite(work.selected_generators[0].fitness));
  EXPECT_EQ(work.events, std::vector<std::string>{"trained discriminator copy 0 has non-finite weights: discarded"});
  const std::vector<std::uint8_t> before = s.discriminators[0].encode();
  EXPECT_EQ(replace_worst(s.discriminators, work.selected_discriminators, 1, ReplacementRule::kAlways,
                          /*check_weights=*/false),
            0);
  EXPECT_EQ(s.discriminators[0].encode(), before);
  EXPECT_EQ(replace_worst(s.generators, work.selected_generators, 1, ReplacementRule::kAlways, false), 1);
}

TEST(Train, ABatchDelayChangesNothingButTheTime) {
  Fixture f(toy_config());
  std::vector<std::vector<std::uint8_t>> out;
  std::vector<double> seconds;
  for (int delay_ms : {0, 30}) {
    CellState s = f.trainer.initial_state(4, 4);
    GenerationWorkingSet work;
    work.batch_delay = std::chrono::milliseconds(delay_ms);
    select_two_pairs(f, s, work);
    const auto started = std::chrono::steady_clock::now();
    train_copies(f.config.training, f.data, 4, f.config.network.latent_dim, 4, work);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    out.push_back(work.selected_generators[1].encode());
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_GE(seconds[1], 4 * 0.030);
}

TEST(EvolveMixture, ANonFiniteGeneratorGetsNoWeight) {
  Config c = toy_config();
  c.training.mixture_sigma = 0.3;
  Fixture f(c);
  CellState s = f.trainer.initial_state(4, 4);
  f.trainer.run_generation(s, f.neighbours());
  ASSERT_EQ(s.neighbour_generators.size(), 4u);
  poison(s.neighbour_generators[1]);  // mixture slot 2
  for (int round = 0; round < 3; ++round) {
    SplitMix64 rng(30 + round);
    const MixtureOutcome out = evolve_mixture(c, *f.scorer, objective_name(c), 1, s, rng);
    EXPECT_EQ(s.mixture_weights[2], 0.0);
    EXPECT_NEAR(std::accumulate(s.mixture_weights.begin(), s.mixture_weights.end(), 0.0), 1.0, 1e-12);
    EXPECT_TRUE(std::isfinite(s.mixture_objective));
    EXPECT_EQ(out.events, std::vector<std::string>{"mixture generator 2 (a neighbour's) non-finite: weight 0"});
  }
}

}  // namespace
}  // namespace cellgan

namespace cellgan {
namespace {

// evolve_mixtures() of several cells, in one classifier call or cell by
// cell, leaves each cell as evolve_mixture() of that cell alone does: the
// same weights, objective, scores and preview; with the samples drawn
// through one stack, the same weights and the rest within rounding.
TEST(EvolveMixtures, SeveralCellsGetEachTheOutcomeOfItsOwn) {
  Config c = toy_config();
  c.training.mixture_sigma = 0.3;
  c.evaluation.preview_every = 1;
  Fixture f(c);
  const std::vector<int> cells = {4, 0, 8};
  const auto states = [&] {
    std::vector<CellState> out;
    for (int cell : cells) {
      out.push_back(f.trainer.initial_state(cell, 4));
      f.trainer.run_generation(out.back(), f.neighbours());
    }
    return out;
  };
  std::vector<CellState> alone = states();
  std::vector<MixtureOutcome> expected;
  for (std::size_t i = 0; i < alone.size(); ++i) {
    SplitMix64 rng(40 + i);
    expected.push_back(evolve_mixture(c, *f.scorer, objective_name(c), 2, alone[i], rng));
  }
  for (MixtureBatching batching : {MixtureBatching::kOneCall, MixtureBatching::kCellByCell, MixtureBatching::kStacked}) {
    std::vector<CellState> together = states();
    std::vector<SplitMix64> rngs;
    for (std::size_t i = 0; i < together.size(); ++i) rngs.emplace_back(40 + i);
    std::vector<MixtureCell> mixture_cells;
    for (std::size_t i = 0; i < together.size(); ++i) mixture_cells.push_back({&together[i], &rngs[i]});
    const std::vector<MixtureOutcome> got =
        evolve_mixtures(c, *f.scorer, objective_name(c), 2, mixture_cells, /*score_always=*/true, batching);
    ASSERT_EQ(got.size(), expected.size());
    // Stacked, the samples are each generator's own to rounding (stacked_sampling.h): the same choice, and
    // scores and previews within rounding; otherwise the same bits.
    const bool rounded = batching == MixtureBatching::kStacked;
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(testing::Message() << "cell " << cells[i] << ", batching " << static_cast<int>(batching));
      EXPECT_EQ(together[i].mixture_weights, alone[i].mixture_weights);
      EXPECT_EQ(got[i].improved, expected[i].improved);
      EXPECT_FALSE(got[i].preview.empty());
      if (!rounded) {
        EXPECT_EQ(together[i].mixture_objective, alone[i].mixture_objective);
        EXPECT_EQ(got[i].scores, expected[i].scores);
        EXPECT_EQ(got[i].preview, expected[i].preview);
        continue;
      }
      EXPECT_NEAR(together[i].mixture_objective, alone[i].mixture_objective, 1e-4);
      ASSERT_EQ(got[i].scores.size(), expected[i].scores.size());
      for (const auto& [key, value] : expected[i].scores) {
        if (std::isinf(value))
          EXPECT_EQ(got[i].scores.at(key), value) << key;
        else
          EXPECT_NEAR(got[i].scores.at(key), value, 1e-4 * (1.0 + std::abs(value))) << key;
      }
      ASSERT_EQ(got[i].preview.size(), expected[i].preview.size());
      for (std::size_t k = 0; k < got[i].preview.size(); ++k)
        ASSERT_NEAR(got[i].preview[k], expected[i].preview[k], 1e-5) << "preview value " << k;
    }
  }
  // The cells differ: not one outcome copied three times.
  EXPECT_NE(expected[0].scores, expected[1].scores);
}

}  // namespace
}  // namespace cellgan
