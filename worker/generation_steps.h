// The steps of one generation of one cell (docs/architecture.md, "One generation of one cell"), one function each;
// CellTrainer::run_generation() calls them in this order:
//
//   poison_generators     the fault `nan` only (cell_faults.h)
//   replace_non_finite    docs/operations.md, "Faults: what is survived": non-finite local individuals go
//   gather_neighbourhood  step 1, before the seed
//   seed_generation       then draw_generation_losses (mustangs)
//   evaluate_fitness      step 2 (CellTrainer: its draws, then the game with other cells' on one PairGame)
//   select_by_tournament  step 3
//   train_in_lockstep     steps 4 and 5 (lockstep_training.h; mutate_learning_rate before each Adam step)
//   score_trained_copies  step 6, first half
//   replace_worst         step 6, second half (generators, then discriminators)
//   keep_neighbour_generators, evolve_mixture   step 7
//   record_outcome        the record
//
// The order is part of the result: every step that draws takes its
// numbers from the generation's streams (work.rng, work.generator), so
// calling the steps in another order, or skipping one, changes every later
// draw. The steps that draw say so.
//
// Internal to cellgan_worker (and its tests); the public face is
// worker/cell_trainer.h. Steps 6 to the record are in copies_replacement.cpp,
// the others in generation_steps.cpp.
//
// Thread-safety: the functions share no state of their own. The draws come
// from the cell's own streams (seed_generation), and copies of networks are
// made undrawn (initial_weights.h): nothing draws from Torch's process-wide
// generator.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/nn/individual.h"
#include "common/nn/scores.h"
#include "common/nn/training_data.h"
#include "common/rng.h"
#include "worker/cell_state.h"
#include "worker/cell_trainer.h"

namespace cellgan {

// A fitness as it orders: a non-finite one as +inf (the worst).
inline double finite_or_inf(double v) { return std::isfinite(v) ? v : INFINITY; }
// "generator" or "discriminator", for events lines.
inline const char* role_name(Role role) { return role == Role::kGenerator ? "generator" : "discriminator"; }

class PairGame;

// What the steps of one generation hand each other. The pools point into
// the cell's state and into this object, so it is neither copied nor moved.
// What a game (play_every_pair) computed that a later game on the same
// batches takes again instead of computing it twice: each generator's
// fakes on the latent batch and each discriminator's output on the real
// batch, by individual. Valid while those individuals' weights do not
// change: within one generation's evaluation, where the pool is never
// trained (only its copies are), so the same values, to the bit.
struct PlayedOutputs {
  std::map<const Individual*, torch::Tensor> fakes;
  std::map<const Individual*, torch::Tensor> d_real;
};

struct GenerationWorkingSet {
  GenerationWorkingSet() = default;
  GenerationWorkingSet(const GenerationWorkingSet&) = delete;
  GenerationWorkingSet& operator=(const GenerationWorkingSet&) = delete;

  // gather: the neighbours' centres in neighbourhood order, weights only.
  std::vector<Individual> neighbour_generators;
  std::vector<Individual> neighbour_discriminators;
  // gather: N_G and N_D, the local individuals first, then the neighbours';
  // `*_origin` is the centre each one came from (null for a local one).
  std::vector<Individual*> generator_pool;
  std::vector<Individual*> discriminator_pool;
  std::vector<const NeighbourCentre*> generator_origin;
  std::vector<const NeighbourCentre*> discriminator_origin;
  // seed_generation: the generation's own streams: `rng` for the
  // algorithm's choices, `generator` (a CPU generator of the cell's own)
  // for Torch's draws (samples, the data's order, and on the CPU the latent
  // vectors of training), `latent_seed` for the latent vectors of training
  // on a GPU (latent_generator()), `fitness_seed` for the fitness samples'
  // latent vectors on a GPU, and `global_seed` for dropout and the
  // interpolates of wgan_gp's penalty (the lockstep's noise streams,
  // lockstep_parts.h).
  SplitMix64 rng{0};
  at::Generator generator;
  std::uint64_t latent_seed = 0;
  std::uint64_t fitness_seed = 0;
  std::uint64_t global_seed = 0;
  // evaluate_fitness: the samples fitness was measured on; the trained
  // copies are scored on the same ones.
  torch::Tensor fitness_real;
  torch::Tensor fitness_latent;
  // evaluate_fitness: the pool's outputs on them, which
  // score_trained_copies takes again.
  PlayedOutputs played;
  // Set by the caller: plays the games (null: one of their own each time).
  PairGame* game = nullptr;
  // select_by_tournament: the winners (deep copies), trained by
  // train_in_lockstep()
  // and offered to replace_worst().
  std::vector<Individual> selected_generators;
  std::vector<Individual> selected_discriminators;
  // train: a selected copy met a non-finite loss (index as above);
  // score_trained_copies discards it.
  std::vector<bool> diverged_generators;
  std::vector<bool> diverged_discriminators;
  // train, when copies_score_decides_nothing(): each copy's mean training
  // loss (NaN: it never stepped), for take_training_losses(); else empty.
  std::vector<double> training_generator_losses;
  std::vector<double> training_discriminator_losses;
  // Set by the caller: where the cell computes (its training data's
  // device); neighbours' individuals are read onto it.
  torch::Device device = torch::kCPU;
  // Set by the caller: added to every training batch (fault `delay`).
  std::chrono::milliseconds batch_delay{0};
  // Lines for the record's events (GenerationRecord::events), unprefixed.
  std::vector<std::string> events;
};

// The fault `nan`: every local generator's parameters become NaN. Draws
// nothing.
void poison_generators(CellState& state);

// docs/operations.md, "Faults: what is survived", before step 1: each local individual whose weights, Adam state
// or learning rate are non-finite is discarded and replaced by a whole
// copy (Adam state and lr included) of the first neighbour centre of its
// role, in neighbourhood order, that is finite; with no finite neighbour,
// by a copy of the first finite local individual of its role; with none at
// all, throws std::runtime_error. Each replacement is a line in
// work.events. Draws nothing (copies are made undrawn).
void replace_non_finite(CellState& state, const std::vector<NeighbourCentre>& neighbours, const NetworkShape& shape,
                        const AdamSettings& adam, GenerationWorkingSet& work);

// Step 1. Drops the neighbours' generators kept from the last generation
// (nothing reads them before step 7) and reads every neighbour's centre
// pair, weights only, into `work`; builds the pools. A neighbour individual
// with non-finite weights stays out of the pools (a line in work.events);
// its generator still takes its mixture slot, where evolve_mixture gives
// it no weight. Draws nothing (copies are made undrawn).
void gather_neighbourhood(CellState& state, const std::vector<NeighbourCentre>& neighbours, const NetworkShape& shape,
                          const AdamSettings& adam, GenerationWorkingSet& work);

// Seeds work.rng, work.generator and work's latent, fitness and global seeds
// from (config.seed, cell, generations completed), so the rest depends
// only on the inputs and not on what other cells draw in the same process.
void seed_generation(const Config& config, const CellState& state, GenerationWorkingSet& work);

// What training (train_in_lockstep()) draws the cell's latent
// vectors from on `device`, taken once at its start: on the CPU
// work.generator itself (its draws go on from the data's order); on a GPU
// a Philox generator of the cell's own there, seeded with work.latent_seed
// (generator_on() of member_draws.h), so the vectors are drawn on the
// device.
at::Generator latent_generator(const GenerationWorkingSet& work, torch::Device device);

// Mustangs only (else nothing): each local pair draws its loss for this
// generation from `rng`.
void draw_generation_losses(const TrainingConfig& training, CellState& state, SplitMix64& rng);

// Step 2. Draws fitness_samples real rows (work.generator) and latent
// vectors (work.generator on the CPU; on a GPU a generator of the cell's own
// there, seeded with work.fitness_seed, so they are drawn on the device)
// into `work` and scores every G of the pool against every D.
void evaluate_fitness(const TrainingConfig& training, const TrainingData& data, std::int64_t latent_dim,
                      GenerationWorkingSet& work);
// Step 2's draws alone, for a generation whose game decides nothing
// (game_decides_nothing()): the same draws, so training draws the same.
void draw_fitness_samples(const TrainingConfig& training, const TrainingData& data, std::int64_t latent_dim,
                          GenerationWorkingSet& work);

// True when the fitness game cannot change what the generation does: one
// generator and one discriminator in the pools (every tournament picks
// them) and replacement `always` (every finite copy replaces). The game's
// numbers then only fill the record.
bool game_decides_nothing(const TrainingConfig& training, const GenerationWorkingSet& work);
// True when scoring the trained copies cannot change the replacement:
// one copy of each (population_size 1) and replacement `always`.
bool copies_score_decides_nothing(const TrainingConfig& training);

// The game behind fitness: each generator's fitness becomes its mean loss
// against `discriminators`, each discriminator's its mean loss against
// `generators`, on `real` and the latent batch `z`, with BCE in the form
// `bce` (training.bce). No gradients; the networks are left in training
// mode. Draws nothing. With `reuse`, the outputs found there are taken
// instead of computed, and those computed are added to it. Played on
// stacks (pair_game.h) by `game`, which keeps them from game to game (null:
// a game of its own).
void play_every_pair(const std::vector<Individual*>& generators, const std::vector<Individual*>& discriminators,
                     const torch::Tensor& real, const torch::Tensor& z, BceForm bce, PlayedOutputs* reuse = nullptr,
                     PairGame* game = nullptr);
// The same game, one pair at a time: for the network kinds that are not
// stacked, and the reference the stacked game is tested against.
void play_one_pair_at_a_time(const std::vector<Individual*>& generators,
                             const std::vector<Individual*>& discriminators, const torch::Tensor& real,
                             const torch::Tensor& z, BceForm bce, PlayedOutputs* reuse = nullptr);

// Frees what only score_trained_copies() reads (the fitness samples, the
// pool's played outputs, the neighbours' discriminators, the pools), for a
// generation whose copies are not scored (copies_score_decides_nothing()):
// a worker holds every cell's working set while its cells train together.
void drop_what_scoring_copies_needs(GenerationWorkingSet& work);

// Step 3. population_size tournaments on each pool (generators first) into
// work.selected_*. Draws from work.rng.
void select_by_tournament(const TrainingConfig& training, GenerationWorkingSet& work);

// `count` tournaments of `tournament` draws with replacement from `pool`
// (lowest fitness wins; NaN counts as +inf). Winners are whole copies with
// their Adam state: a local one (null origin) as an Individual::snapshot
// (weights and moments shared, not copied: training reads the winners into its
// stacks and gives new individuals, lockstep_training.h); a neighbour, held
// without its Adam state, is read again whole from its origin (a snapshot
// of a live one) and keeps its fitness. So a winner must not be changed in
// place: the pool would change with it.
std::vector<Individual> tournament_winners(const std::vector<Individual*>& pool,
                                           const std::vector<const NeighbourCentre*>& origin, std::int64_t count,
                                           std::int64_t tournament, SplitMix64& rng);

// Step 5: with probability mutation_probability,
// lr <- max(0, lr + scale * N(-lr0/10, lr0)), written to Adam. Draws one
// uniform from `rng`, and a normal when it mutates. With
// mutated_lr_reaches_adam false, Adam's lr is then set to learning_rate,
// mutated or not (the individual keeps its own, mutated lr).
void mutate_learning_rate(const TrainingConfig& training, Individual& individual, SplitMix64& rng);

// Step 6, first half: sets the trained copies' fitness against the
// gathered pools on the fitness samples (copies of G against the pool's Ds
// and the reverse); the pools' own fitness is left as it was. Every copy
// that replace_worst() will discard as non-finite (a loss in training,
// fitness or weights) gets a NaN fitness and a line in work.events; the
// weights of the copies not discarded already are checked with one wait.
// `bce` is training.bce, as evaluate_fitness played with it.
void score_trained_copies(BceForm bce, GenerationWorkingSet& work);
// The same for several cells' working sets, their games played together
// (PairGame::play_cells) on the first one's `game` (null: one of its own);
// each cell's result is the one it gets alone.
void score_trained_copies(BceForm bce, const std::vector<GenerationWorkingSet*>& works);

// Step 6, first half, when the game decides nothing: each trained copy's
// fitness is its mean loss in training (kept by train_in_lockstep(); every
// copy steps on batch 0, step_schedule.h), with the same discards and
// work.events lines as score_trained_copies.
void take_training_losses(GenerationWorkingSet& work);

// Step 6, second half: up to `n_replacements` copies (best first) replace
// the worst local individuals (worst first). Copies with a non-finite
// fitness or weights are skipped; the weights of those with a finite
// fitness are checked with one wait, unless `check_weights` is false
// (after score_trained_copies or take_training_losses, which leave every
// copy with non-finite weights a NaN fitness). kIfBetter replaces only when the copy's
// fitness is strictly lower than the local one's (a NaN local counts as
// +inf). Returns how many were replaced. Draws nothing.
int replace_worst(std::vector<Individual>& local, std::vector<Individual>& copies, std::int64_t n_replacements,
                  ReplacementRule rule, bool check_weights = true);

// Step 7, first half: the gathered neighbours' generators become
// state.neighbour_generators, the mixture's other slots. The pools are not
// to be used after this.
void keep_neighbour_generators(CellState& state, GenerationWorkingSet& work);

// What the mixture ES kept.
struct MixtureOutcome {
  bool improved = false;                 // the candidate weights were kept
  std::map<std::string, double> scores;  // the kept weights' report
  std::vector<float> preview;            // see GenerationRecord::preview
  std::vector<std::string> events;       // non-finite generators left out
};

// Step 7: the (1+1)-ES on state.mixture_weights. Draws the candidate and
// a seed from `rng`, scores the mixture under both weight vectors on
// shared draws (each generator's own latent stream from the seed, passed
// through it once; each vector takes its share of the rows, so both see the
// same samples where their shares agree and every row is classified once),
// keeps the candidate when its objective (`objective`, a key of
// scorer.report()) is lower, and sets state.mixture_objective.
// A generator of the mixture with non-finite weights gets weight 0 in both
// (the others are renormalised), so it is never sampled.
// `generation` (1-based) decides whether the outcome carries a preview.
// A mixture of one generator has no choice to make; with `score_always`
// false it is scored only on preview_generation()s (the outcome's scores
// are empty on the others and state.mixture_objective is left as it was).
// The draws are the same either way.
MixtureOutcome evolve_mixture(const Config& config, SampleScorer& scorer, const std::string& objective,
                              std::int64_t generation, CellState& state, SplitMix64& rng, bool score_always = true);

// Step 7 of several cells of one worker: evolve_mixture() of each, in
// order, the outcome of each cell the one it gets alone (each draws from
// its own stream, and the classifier's features are each row's own,
// scores.h). How the cells are batched:
// - kCellByCell: one cell at a time as evolve_mixture() does, so that only
//   one cell's samples are held (on the CPU, where batching gains nothing);
// - kOneCall: every cell's samples classified in one call, and every
//   weight vector's report computed together
//   (SampleScorer::report_features_together: on a GPU, one wait instead of
//   several per report), each equal to its own to rounding;
// - kStacked (on a GPU): kOneCall, with every generator of every cell's
//   mixture drawing its samples in one stacked pass (sample_each_stacked()
//   of stacked_sampling.h: a few kernels, not a forward pass a generator),
//   each sample its own to rounding.
struct MixtureCell {
  CellState* state = nullptr;
  SplitMix64* rng = nullptr;  // the cell's generation stream (work.rng)
};
enum class MixtureBatching { kCellByCell, kOneCall, kStacked };
std::vector<MixtureOutcome> evolve_mixtures(const Config& config, SampleScorer& scorer, const std::string& objective,
                                            std::int64_t generation, const std::vector<MixtureCell>& cells,
                                            bool score_always, MixtureBatching batching);

// The record: counts the generation as completed in `state` and fills the
// record's losses, learning rates, mixture weights and mixture outcome.
// The cell, generation, replacement counts and seconds are the caller's.
void record_outcome(CellState& state, MixtureOutcome mixture, GenerationRecord& record);

}  // namespace cellgan
