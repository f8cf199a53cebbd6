// One generation of cellular coevolution in one cell (see cell_trainer.h).
#include "worker/cell_trainer.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/nn/cuda_step_graph.h"
#include "common/nn/losses.h"
#include "common/rng.h"
#include "worker/generation_steps.h"
#include "worker/lockstep_training.h"
#include "worker/pair_game.h"

namespace cellgan {
namespace {

AdamSettings adam_of(const Config& c) { return {c.training.adam_beta1, c.training.adam_beta2}; }

// Times the phases of a generation one after another: each lap() gives
// the seconds since the previous lap (or since construction).
class PhaseClock {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// A cell's ensemble as views of its state: the local generators, then the
// neighbours' as last gathered, under the mixture weights (uniform while
// the two counts differ, before the first generation).
struct EnsembleView {
  std::vector<const Individual*> generators;
  std::vector<double> weights;
};

EnsembleView ensemble_view(const CellState& state) {
  EnsembleView v;
  for (const auto& g : state.generators) v.generators.push_back(&g);
  for (const auto& g : state.neighbour_generators) v.generators.push_back(&g);
  v.weights = state.mixture_weights;
  if (v.generators.size() != v.weights.size())
    v.weights.assign(v.generators.size(), 1.0 / static_cast<double>(v.generators.size()));
  return v;
}

}  // namespace

CellTrainer::CellTrainer(const Config& config, const TrainingData& data, SampleScorer& scorer, bool isolated)
    : config_(config), data_(data), scorer_(scorer), objective_(objective_name(config)),
      game_(std::make_unique<PairGame>()), isolated_(isolated) {
  const std::int64_t epoch = std::max<std::int64_t>(1, data_.size() / config_.training.batch_size);
  batches_per_generation_ =
      config_.training.batches_per_generation > 0 ? config_.training.batches_per_generation : epoch;
}

CellTrainer::CellTrainer(CellTrainer&&) noexcept = default;
CellTrainer::~CellTrainer() = default;

CellState CellTrainer::initial_state(int cell, int neighbour_count) const {
  const TrainingConfig& t = config_.training;
  torch::manual_seed(derive_seed(config_.seed, Stream::kCellInit, static_cast<std::uint64_t>(cell)));
  SplitMix64 rng(derive_seed(config_.seed, Stream::kCellInit, static_cast<std::uint64_t>(cell) + (1ULL << 32)));
  const NetworkShape shape = network_shape(config_);
  CellState state;
  state.cell = cell;
  for (std::int64_t i = 0; i < t.population_size; ++i) {
    const LossKind g_loss = t.loss == LossKind::kMustangs ? draw_mustangs_loss(rng) : t.loss;
    state.generators.emplace_back(Role::kGenerator, shape, t.learning_rate, adam_of(config_), g_loss, data_.device());
    state.generators.back().source_cell = cell;
    state.discriminators.emplace_back(Role::kDiscriminator, shape, t.learning_rate, adam_of(config_),
                                      discriminator_loss_for(g_loss), data_.device());
    state.discriminators.back().source_cell = cell;
  }
  const std::size_t slots = static_cast<std::size_t>(t.population_size + neighbour_count);
  state.mixture_weights.assign(slots, 1.0 / static_cast<double>(slots));
  return state;
}

void CellTrainer::mutate_learning_rate(Individual& individual, SplitMix64& rng) const {
  cellgan::mutate_learning_rate(config_.training, individual, rng);
}

CellGeneration::CellGeneration() = default;
CellGeneration::CellGeneration(CellGeneration&&) noexcept = default;
CellGeneration& CellGeneration::operator=(CellGeneration&&) noexcept = default;
CellGeneration::~CellGeneration() = default;

GenerationRecord CellTrainer::run_generation(CellState& state, const std::vector<NeighbourCentre>& neighbours,
                                             const CellFaults& faults) {
  CellGeneration generation = begin_generation(state, neighbours, faults);
  train({&generation});
  return finish_generation(generation);
}

CellGeneration CellTrainer::begin_generation(CellState& state, const std::vector<NeighbourCentre>& neighbours,
                                             const CellFaults& faults) {
  CellGeneration generation = prepare_generation(state, neighbours, faults);
  play_together({this}, {&generation});
  select(generation);
  return generation;
}

CellGeneration CellTrainer::prepare_generation(CellState& state, const std::vector<NeighbourCentre>& neighbours,
                                               const CellFaults& faults) {
  const TrainingConfig& t = config_.training;
  const NetworkShape shape = network_shape(config_);
  CellGeneration generation;
  generation.state = &state;
  generation.neighbours = neighbours;
  generation.work = std::make_unique<GenerationWorkingSet>();
  GenerationRecord& record = generation.record;
  record.cell = state.cell;
  record.generation = state.generation + 1;
  std::map<std::string, double>& seconds = record.seconds;
  GenerationWorkingSet& work = *generation.work;
  work.batch_delay = faults.batch_delay;
  work.device = data_.device();
  work.game = game_.get();
  PhaseClock clock;

  {
    RECORD_USER_SCOPE("cellgan::gather");
    if (faults.poison_generators) {
      poison_generators(state);
      work.events.push_back("fault nan: the cell's generators poisoned (NaN weights)");
    }
    replace_non_finite(state, generation.neighbours, shape, adam_of(config_), work);
    gather_neighbourhood(state, generation.neighbours, shape, adam_of(config_), work);
    seconds["gather"] = clock.lap();
  }
  RECORD_USER_SCOPE("cellgan::fitness_samples");
  seed_generation(config_, state, work);
  draw_generation_losses(t, state, work.rng);
  clock.lap();  // a few draws: not a phase

  draw_fitness_samples(t, data_, shape.latent_dim, work);
  seconds["evaluate"] = clock.lap();
  return generation;
}

void CellTrainer::play_together(const std::vector<CellTrainer*>& trainers,
                                const std::vector<CellGeneration*>& generations) {
  // Only the games that decide something are played.
  std::vector<CellGame> games;
  std::vector<CellGeneration*> playing;
  for (std::size_t i = 0; i < generations.size(); ++i) {
    GenerationWorkingSet& work = *generations[i]->work;
    if (game_decides_nothing(trainers[i]->config_.training, work)) continue;
    games.push_back({work.generator_pool, work.discriminator_pool, work.fitness_real, work.fitness_latent, &work.played});
    playing.push_back(generations[i]);
  }
  if (games.empty()) return;
  RECORD_USER_SCOPE("cellgan::fitness_game");
  PhaseClock clock;
  trainers.front()->game_->play_cells(games, trainers.front()->config_.training.bce);
  const double each = clock.lap() / static_cast<double>(playing.size());
  for (CellGeneration* generation : playing) generation->record.seconds["evaluate"] += each;
}

void CellTrainer::select(CellGeneration& generation) {
  const TrainingConfig& t = config_.training;
  GenerationWorkingSet& work = *generation.work;
  RECORD_USER_SCOPE("cellgan::select");
  PhaseClock clock;
  select_by_tournament(t, work);
  generation.record.seconds["select"] = clock.lap();
  if (copies_score_decides_nothing(t)) drop_what_scoring_copies_needs(work);
}

namespace {

// The train and mutate seconds of a joint training: the train seconds
// shared out evenly, each cell's own mutating seconds.
void share_seconds(const std::vector<CellGeneration*>& generations, const std::vector<double>& mutating,
                   double elapsed) {
  double total_mutating = 0.0;
  for (const double m : mutating) total_mutating += m;
  const double training = std::max(0.0, elapsed - total_mutating) / static_cast<double>(generations.size());
  for (std::size_t i = 0; i < generations.size(); ++i) {
    generations[i]->record.seconds["train"] = training;
    generations[i]->record.seconds["mutate"] = mutating[i];
  }
}

}  // namespace

void CellTrainer::train(const std::vector<CellGeneration*>& generations) {
  train_together(std::vector<CellTrainer*>(generations.size(), this), generations);
}

void CellTrainer::train_together(const std::vector<CellTrainer*>& trainers,
                                 const std::vector<CellGeneration*>& generations) {
  if (generations.empty()) return;
  const CellTrainer& first = *trainers.front();
  const TrainingConfig& t = first.config_.training;
  const NetworkShape shape = network_shape(first.config_);
  const auto rows = [&t](const CellTrainer* trainer) { return std::min(t.batch_size, trainer->data_.size()); };
  // Every network kind is stacked (trains_in_lockstep); cells whose batch
  // counts or sizes differ (per_class's classes) are stacks of their own.
  bool together = true;
  for (const CellTrainer* trainer : trainers)
    together = together && trainer->batches_per_generation_ == first.batches_per_generation_ &&
               rows(trainer) == rows(&first);
  if (!together) {
    for (std::size_t i = 0; i < generations.size(); ++i) trainers[i]->train({generations[i]});
    return;
  }
  RECORD_USER_SCOPE("cellgan::train");
  PhaseClock clock;
  std::vector<LockstepCell> cells;
  for (std::size_t i = 0; i < generations.size(); ++i)
    cells.push_back({generations[i]->state->cell, generations[i]->work.get(), &trainers[i]->data_});
  const std::vector<double> mutating =
      train_in_lockstep(t, first.data_, first.batches_per_generation_, shape.latent_dim, cells,
                        cuda_graphs_wanted(first.config_, first.data_.device()));
  share_seconds(generations, mutating, clock.lap());
}

GenerationRecord CellTrainer::finish_generation(CellGeneration& generation) {
  return std::move(finish_together({this}, {&generation}).front());
}

void CellTrainer::replace(CellGeneration& generation) {
  const TrainingConfig& t = config_.training;
  CellState& state = *generation.state;
  GenerationWorkingSet& work = *generation.work;
  RECORD_USER_SCOPE("cellgan::replace");
  PhaseClock clock;
  // score_trained_copies or take_training_losses left a NaN fitness to every copy with non-finite weights.
  generation.record.generators_replaced = replace_worst(state.generators, work.selected_generators, t.n_replacements,
                                                        t.replacement, /*check_weights=*/false);
  generation.record.discriminators_replaced = replace_worst(state.discriminators, work.selected_discriminators,
                                                            t.n_replacements, t.replacement, /*check_weights=*/false);
  generation.record.seconds["replace"] = clock.lap();
  keep_neighbour_generators(state, work);
}

std::vector<GenerationRecord> CellTrainer::finish_together(const std::vector<CellTrainer*>& trainers,
                                                          const std::vector<CellGeneration*>& generations) {
  if (generations.empty()) return {};
  // Step 6: the copies' score, every cell that scores them in one game.
  PhaseClock scoring;
  {
    RECORD_USER_SCOPE("cellgan::score_copies");
    std::vector<GenerationWorkingSet*> scored;
    for (std::size_t i = 0; i < generations.size(); ++i) {
      if (copies_score_decides_nothing(trainers[i]->config_.training))
        take_training_losses(*generations[i]->work);
      else
        scored.push_back(generations[i]->work.get());
    }
    score_trained_copies(trainers.front()->config_.training.bce, scored);
  }
  const double scoring_each = scoring.lap() / static_cast<double>(generations.size());
  for (std::size_t i = 0; i < generations.size(); ++i) {
    generations[i]->record.seconds["evaluate"] += scoring_each;
    trainers[i]->replace(*generations[i]);
  }

  // Step 7 of every cell in one call: the block's trainers share a scorer and its settings.
  const CellTrainer& first = *trainers.front();
  std::vector<MixtureCell> cells;
  for (std::size_t i = 0; i < generations.size(); ++i) {
    if (&trainers[i]->scorer_ != &first.scorer_ || trainers[i]->isolated_ != first.isolated_ ||
        generations[i]->record.generation != generations.front()->record.generation)
      throw std::logic_error("finish_together: the generations differ in their scorer, isolation or number");
    cells.push_back({generations[i]->state, &generations[i]->work->rng});
  }
  PhaseClock clock;
  std::vector<MixtureOutcome> mixtures;
  {
    RECORD_USER_SCOPE("cellgan::mixture");
    mixtures = evolve_mixtures(first.config_, first.scorer_, first.objective_, generations.front()->record.generation,
                               cells, /*score_always=*/!first.isolated_,
                               first.device().is_cuda() ? MixtureBatching::kStacked : MixtureBatching::kCellByCell);
  }
  const double each = clock.lap() / static_cast<double>(generations.size());

  std::vector<GenerationRecord> records;
  for (std::size_t i = 0; i < generations.size(); ++i) {
    CellGeneration& generation = *generations[i];
    GenerationRecord& record = generation.record;
    for (const auto* lines : {&generation.work->events, &mixtures[i].events})
      for (const std::string& line : *lines)
        record.events.push_back(fmt::format("cell {}, generation {}: {}", generation.state->cell, record.generation,
                                            line));
    record_outcome(*generation.state, std::move(mixtures[i]), record);
    record.seconds["evaluate"] += each;
    record.seconds["idle"] = 0.0;  // the worker loop's to fill
    generation.work.reset();
    records.push_back(std::move(record));
  }
  return records;
}

Ensemble CellTrainer::ensemble(const CellState& state) {
  EnsembleView v = ensemble_view(state);
  Ensemble e;
  e.cell = state.cell;
  e.shape = state.generators.front().shape();
  for (const Individual* g : v.generators) e.generators.push_back(g->clone_weights());
  e.weights = std::move(v.weights);
  return e;
}

void CellTrainer::encode_ensemble(const CellState& state, ByteWriter& w) {
  const EnsembleView v = ensemble_view(state);
  encode_ensemble_to(w, state.generators.front().shape(), state.cell, v.weights, v.generators);
}

std::size_t CellTrainer::encoded_ensemble_bound(const CellState& state) {
  const EnsembleView v = ensemble_view(state);
  return encoded_ensemble_size(v.weights, v.generators);
}

}  // namespace cellgan
