// One generation of cellular coevolution in one cell (see cell_trainer.h).
#include "worker/cell_trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "common/bytes.h"
#include "common/nn/discriminator_step.h"
#include "common/nn/losses.h"
#include "common/rng.h"

namespace cellgan {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double finite_or_inf(double v) { return std::isfinite(v) ? v : INFINITY; }

AdamSettings adam_of(const Config& c) { return {c.training.adam_beta1, c.training.adam_beta2}; }

// Step 2: every generator against every discriminator on one fixed real
// batch and one fixed latent batch. Fitness is the mean loss.
void evaluate_fitness(const std::vector<Individual*>& gens, const std::vector<Individual*>& discs,
                      const torch::Tensor& real, const torch::Tensor& z) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> d_real;
  for (Individual* d : discs) {
    d->discriminator()->eval();
    d_real.push_back(d->discriminator()->forward(real));
  }
  std::vector<double> d_total(discs.size(), 0.0);
  for (Individual* g : gens) {
    g->generator()->eval();
    const torch::Tensor fake = g->generator()->forward(z);
    double g_total = 0.0;
    for (std::size_t j = 0; j < discs.size(); ++j) {
      const torch::Tensor d_fake = discs[j]->discriminator()->forward(fake);
      g_total += generator_loss(g->loss, d_fake).item<double>();
      d_total[j] += discriminator_loss(discriminator_loss_for(g->loss), d_real[j], d_fake).item<double>();
    }
    g->fitness = g_total / static_cast<double>(discs.size());
  }
  for (std::size_t j = 0; j < discs.size(); ++j) discs[j]->fitness = d_total[j] / static_cast<double>(gens.size());
  for (Individual* g : gens) g->generator()->train();
  for (Individual* d : discs) d->discriminator()->train();
}

// A neighbour's centre individual of `role`: weights only (for fitness and
// the mixture) or whole, with its Adam state (for a tournament winner).
Individual neighbour_individual(const NeighbourCentre& n, Role role, const NetworkShape& shape,
                                const AdamSettings& adam, bool whole) {
  const Individual* live = role == Role::kGenerator ? n.live_generator : n.live_discriminator;
  if (live != nullptr) return whole ? live->clone() : live->clone_weights();
  const std::vector<std::uint8_t>* bytes = role == Role::kGenerator ? n.generator : n.discriminator;
  return Individual::decode(*bytes, shape, adam, whole);
}

// Step 3: tournament selection with replacement. Winners are deep copies:
// a local individual is cloned; a neighbour, held without its Adam state,
// is read again whole from its centre (`origin`, null for local ones) and
// keeps the fitness just evaluated.
std::vector<Individual> select(const std::vector<Individual*>& pool, const std::vector<const NeighbourCentre*>& origin,
                               std::int64_t count, std::int64_t tournament, SplitMix64& rng) {
  std::vector<Individual> winners;
  for (std::int64_t k = 0; k < count; ++k) {
    std::size_t best = pool.size();
    for (std::int64_t t = 0; t < tournament; ++t) {
      const std::size_t candidate = rng.below(pool.size());
      if (best == pool.size() || finite_or_inf(pool[candidate]->fitness) < finite_or_inf(pool[best]->fitness))
        best = candidate;
    }
    if (origin[best] == nullptr) {
      winners.push_back(pool[best]->clone());
    } else {
      const Individual& seen = *pool[best];
      winners.push_back(neighbour_individual(*origin[best], seen.role(), seen.shape(), seen.adam_settings(), true));
      winners.back().fitness = seen.fitness;
    }
  }
  return winners;
}

// Step 6: trained copies replace the worst local individuals.
int replace(std::vector<Individual>& local, std::vector<Individual>& copies, std::int64_t n_replacements,
            ReplacementRule rule) {
  std::vector<std::size_t> worst(local.size());
  std::iota(worst.begin(), worst.end(), 0);
  std::stable_sort(worst.begin(), worst.end(), [&](std::size_t a, std::size_t b) {
    return finite_or_inf(local[a].fitness) > finite_or_inf(local[b].fitness);
  });
  std::vector<std::size_t> best(copies.size());
  std::iota(best.begin(), best.end(), 0);
  std::stable_sort(best.begin(), best.end(), [&](std::size_t a, std::size_t b) {
    return finite_or_inf(copies[a].fitness) < finite_or_inf(copies[b].fitness);
  });
  int replaced = 0;
  std::size_t next_copy = 0;
  for (std::int64_t k = 0; k < n_replacements && k < static_cast<std::int64_t>(worst.size()); ++k) {
    while (next_copy < best.size() &&
           (!std::isfinite(copies[best[next_copy]].fitness) || !copies[best[next_copy]].is_finite()))
      ++next_copy;  // non-finite copies are discarded (SPEC §8)
    if (next_copy >= best.size()) break;
    Individual& copy = copies[best[next_copy]];
    Individual& target = local[worst[k]];
    if (rule == ReplacementRule::kIfBetter && !(copy.fitness < finite_or_inf(target.fitness))) continue;
    target = std::move(copy);
    ++next_copy;
    ++replaced;
  }
  return replaced;
}

std::vector<double> normalised(std::vector<double> w) {
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  if (total <= 0.0) return std::vector<double>(w.size(), 1.0 / static_cast<double>(w.size()));
  for (double& x : w) x /= total;
  return w;
}

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

CellTrainer::CellTrainer(const Config& config, const TrainingData& data, SampleScorer& scorer)
    : config_(config), data_(data), scorer_(scorer), objective_(objective_name(config)) {
  const std::int64_t epoch = std::max<std::int64_t>(1, data_.size() / config_.training.batch_size);
  batches_per_generation_ =
      config_.training.batches_per_generation > 0 ? config_.training.batches_per_generation : epoch;
}

CellState CellTrainer::initial_state(int cell, int neighbour_count) const {
  const TrainingConfig& t = config_.training;
  torch::manual_seed(derive_seed(config_.seed, Stream::kCellInit, static_cast<std::uint64_t>(cell)));
  SplitMix64 rng(derive_seed(config_.seed, Stream::kCellInit, static_cast<std::uint64_t>(cell) + (1ULL << 32)));
  const NetworkShape shape = network_shape(config_);
  CellState state;
  state.cell = cell;
  for (std::int64_t i = 0; i < t.population_size; ++i) {
    const LossKind g_loss = t.loss == LossKind::kMustangs ? draw_mustangs_loss(rng) : t.loss;
    state.generators.emplace_back(Role::kGenerator, shape, t.learning_rate, adam_of(config_), g_loss);
    state.generators.back().source_cell = cell;
    state.discriminators.emplace_back(Role::kDiscriminator, shape, t.learning_rate, adam_of(config_),
                                      discriminator_loss_for(g_loss));
    state.discriminators.back().source_cell = cell;
  }
  const std::size_t slots = static_cast<std::size_t>(t.population_size + neighbour_count);
  state.mixture_weights.assign(slots, 1.0 / static_cast<double>(slots));
  return state;
}

void CellTrainer::mutate_learning_rate(Individual& individual, SplitMix64& rng) const {
  const TrainingConfig& t = config_.training;
  if (rng.uniform() >= t.mutation_probability) return;
  const double lr0 = t.learning_rate;
  const double delta = t.mutation_scale * rng.normal(-lr0 / 10.0, lr0);
  individual.set_learning_rate(std::max(0.0, individual.learning_rate() + delta));
}

GenerationRecord CellTrainer::run_generation(CellState& state, const std::vector<NeighbourCentre>& neighbours) {
  const TrainingConfig& t = config_.training;
  GenerationRecord record;
  record.cell = state.cell;
  record.generation = state.generation + 1;

  // 1. Gather: the neighbours' centres, weights only. The ones gathered a
  // generation ago are replaced in step 7 and used by nothing before it, so
  // they go first: the two sets are never held at once.
  auto t0 = Clock::now();
  state.neighbour_generators.clear();
  const NetworkShape shape = network_shape(config_);
  const AdamSettings adam = adam_of(config_);
  std::vector<Individual> hood_g, hood_d;
  for (const NeighbourCentre& n : neighbours) {
    hood_g.push_back(neighbour_individual(n, Role::kGenerator, shape, adam, /*whole=*/false));
    hood_d.push_back(neighbour_individual(n, Role::kDiscriminator, shape, adam, /*whole=*/false));
  }
  std::vector<Individual*> n_g, n_d;
  std::vector<const NeighbourCentre*> origin_g, origin_d;  // null: local
  for (auto& g : state.generators) {
    n_g.push_back(&g);
    origin_g.push_back(nullptr);
  }
  for (auto& d : state.discriminators) {
    n_d.push_back(&d);
    origin_d.push_back(nullptr);
  }
  for (std::size_t k = 0; k < neighbours.size(); ++k) {
    n_g.push_back(&hood_g[k]);
    origin_g.push_back(&neighbours[k]);
    n_d.push_back(&hood_d[k]);
    origin_d.push_back(&neighbours[k]);
  }
  record.seconds["gather"] = seconds_since(t0);

  // Seeded after the gather: building a network draws from Torch's
  // generator, and those draws stay out of the generation's stream.
  const std::uint64_t stream = (static_cast<std::uint64_t>(state.cell) << 32) ^
                               static_cast<std::uint64_t>(state.generation);
  torch::manual_seed(derive_seed(config_.seed, Stream::kCellTraining, stream));
  SplitMix64 rng(derive_seed(config_.seed, Stream::kCellTraining, stream ^ (1ULL << 63)));
  // Mustangs: each local individual draws its loss for this generation.
  if (t.loss == LossKind::kMustangs) {
    for (std::size_t i = 0; i < state.generators.size(); ++i) {
      state.generators[i].loss = draw_mustangs_loss(rng);
      state.discriminators[i].loss = discriminator_loss_for(state.generators[i].loss);
    }
  }

  // 2. Fitness.
  t0 = Clock::now();
  const std::int64_t n = data_.size();
  const torch::Tensor fit_index = torch::randint(n, {t.fitness_samples}, torch::kLong);
  const torch::Tensor real_fit = data_.rows(fit_index);
  const torch::Tensor z_fit = torch::randn({t.fitness_samples, shape.latent_dim});
  evaluate_fitness(n_g, n_d, real_fit, z_fit);
  double evaluate_seconds = seconds_since(t0);

  // 3. Selection.
  t0 = Clock::now();
  std::vector<Individual> sel_g = select(n_g, origin_g, t.population_size, t.tournament_size, rng);
  std::vector<Individual> sel_d = select(n_d, origin_d, t.population_size, t.tournament_size, rng);
  double mutate_seconds = seconds_since(t0);

  // 4 + 5. Training with learning-rate mutation before each step.
  t0 = Clock::now();
  double mutation_in_training = 0.0;
  const torch::Tensor order = torch::randperm(n, torch::kLong);
  const std::int64_t latent = shape.latent_dim;
  for (std::int64_t b = 0; b < batches_per_generation_; ++b) {
    const std::int64_t start = (b * t.batch_size) % std::max<std::int64_t>(1, n - t.batch_size + 1);
    const torch::Tensor real = data_.rows(order.narrow(0, start, std::min(t.batch_size, n)));
    const std::int64_t bs = real.size(0);
    for (Individual& g : sel_g) {
      auto tm = Clock::now();
      mutate_learning_rate(g, rng);
      mutation_in_training += seconds_since(tm);
      Individual& d = sel_d[rng.below(sel_d.size())];
      g.optimizer().zero_grad();
      const torch::Tensor loss = generator_loss(g.loss, d.discriminator()->forward(g.generator()->forward(
                                                            torch::randn({bs, latent}))));
      loss.backward();
      g.optimizer().step();
    }
    if (b % (t.discriminator_skip + 1) != 0) continue;
    for (Individual& d : sel_d) {
      auto tm = Clock::now();
      mutate_learning_rate(d, rng);
      mutation_in_training += seconds_since(tm);
      Individual& g = sel_g[rng.below(sel_g.size())];
      torch::Tensor fake;
      {
        torch::NoGradGuard no_grad;
        fake = g.generator()->forward(torch::randn({bs, latent}));
      }
      d.optimizer().zero_grad();
      const torch::Tensor loss =
          discriminator_step_loss(d.discriminator(), discriminator_loss_for(g.loss), real, fake, t.r1_penalty);
      loss.backward();
      d.optimizer().step();
    }
  }
  for (Individual& g : sel_g) {
    g.source_cell = state.cell;
    g.release_gradients();  // not state; the next step recreates them
  }
  for (Individual& d : sel_d) {
    d.source_cell = state.cell;
    d.release_gradients();
  }
  record.seconds["train"] = seconds_since(t0) - mutation_in_training;
  mutate_seconds += mutation_in_training;

  // 6. Replacement: score the trained copies against the gathered
  // neighbourhood on the same samples as step 2, then replace.
  t0 = Clock::now();
  {
    std::vector<Individual*> copies_g, copies_d;
    for (auto& g : sel_g) copies_g.push_back(&g);
    for (auto& d : sel_d) copies_d.push_back(&d);
    // Copies of G against the gathered Ds; copies of D against the gathered Gs.
    std::vector<double> saved_d;
    for (Individual* d : n_d) saved_d.push_back(d->fitness);
    evaluate_fitness(copies_g, n_d, real_fit, z_fit);
    for (std::size_t j = 0; j < n_d.size(); ++j) n_d[j]->fitness = saved_d[j];
    std::vector<double> saved_g;
    for (Individual* g : n_g) saved_g.push_back(g->fitness);
    evaluate_fitness(n_g, copies_d, real_fit, z_fit);
    for (std::size_t i = 0; i < n_g.size(); ++i) n_g[i]->fitness = saved_g[i];
  }
  evaluate_seconds += seconds_since(t0);
  t0 = Clock::now();
  record.generators_replaced = replace(state.generators, sel_g, t.n_replacements, t.replacement);
  record.discriminators_replaced = replace(state.discriminators, sel_d, t.n_replacements, t.replacement);
  mutate_seconds += seconds_since(t0);

  // 7. Mixture weights: (1+1)-ES on the objective of the weighted mixture.
  // Each sample is scored once; the report carries the objective.
  t0 = Clock::now();
  // Kept only to sample the mixture: the neighbours' weights, already
  // without Adam state. n_g / n_d are not used past this point.
  state.neighbour_generators = std::move(hood_g);
  hood_d.clear();
  std::vector<Individual*> mixture;
  for (auto& g : state.generators) mixture.push_back(&g);
  for (auto& g : state.neighbour_generators) mixture.push_back(&g);
  std::vector<double> candidate = state.mixture_weights;
  for (double& w : candidate) w = std::max(0.0, w + rng.normal(0.0, t.mixture_sigma));
  candidate = normalised(candidate);
  torch::Generator gen = at::detail::createCPUGenerator(rng.next());
  const std::uint64_t sample_seed = rng.next();
  const std::int64_t every = config_.evaluation.preview_every;
  const std::int64_t preview_rows =
      every > 0 && record.generation % every == 0
          ? (is_toy(config_.data.dataset) ? t.score_samples : std::min(t.score_samples, config_.evaluation.grid_images))
          : 0;
  // Scores a sample of the mixture under `weights`; copies its first
  // preview_rows rows into `preview` (empty when there are none).
  const auto score = [&](const std::vector<double>& weights, std::vector<float>& preview) {
    gen.set_current_seed(sample_seed);  // common random numbers for a fair comparison
    const torch::Tensor samples = sample_mixture(mixture, weights, t.score_samples, gen);
    if (preview_rows > 0) {
      const torch::Tensor rows = samples.narrow(0, 0, preview_rows).contiguous();
      preview.assign(rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel());
    }
    return scorer_.report(samples);
  };
  std::vector<float> current_preview, challenger_preview;
  auto current = score(state.mixture_weights, current_preview);
  auto challenger = score(candidate, challenger_preview);
  const double current_score = current.at(objective_);
  const double candidate_score = challenger.at(objective_);
  record.mixture_improved = candidate_score < current_score;
  if (record.mixture_improved) state.mixture_weights = candidate;
  record.scores = record.mixture_improved ? std::move(challenger) : std::move(current);
  record.preview = std::move(record.mixture_improved ? challenger_preview : current_preview);
  state.mixture_objective = std::min(candidate_score, finite_or_inf(current_score));
  evaluate_seconds += seconds_since(t0);

  // 8. Record.
  state.generation += 1;
  record.generator_loss = state.centre_generator().fitness;
  record.discriminator_loss = state.centre_discriminator().fitness;
  for (const auto& g : state.generators) record.generator_lrs.push_back(g.learning_rate());
  for (const auto& d : state.discriminators) record.discriminator_lrs.push_back(d.learning_rate());
  record.mixture_weights = state.mixture_weights;
  record.seconds["evaluate"] = evaluate_seconds;
  record.seconds["mutate"] = mutate_seconds;
  record.seconds["idle"] = 0.0;
  return record;
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
