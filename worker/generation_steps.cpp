// The steps of one generation of one cell (see generation_steps.h).
#include "worker/generation_steps.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "common/nn/device.h"
#include "common/nn/losses.h"
#include "common/nn/member_draws.h"
#include "worker/pair_game.h"

namespace cellgan {
namespace {

// A neighbour's centre individual of `role`: weights only (for fitness and
// the mixture) or whole, with its Adam state (for a tournament winner).
Individual neighbour_individual(const NeighbourCentre& n, Role role, const NetworkShape& shape,
                                const AdamSettings& adam, bool whole, torch::Device device) {
  const Individual* live = role == Role::kGenerator ? n.live_generator : n.live_discriminator;
  if (live != nullptr) return whole ? live->snapshot() : live->snapshot_weights();
  const std::vector<std::uint8_t>* bytes = role == Role::kGenerator ? n.generator : n.discriminator;
  return Individual::decode(*bytes, shape, adam, whole, device);
}

}  // namespace

void poison_generators(CellState& state) {
  torch::NoGradGuard no_grad;
  // New tensors, not a fill: snapshots of the generators (Individual::snapshot) share the old ones.
  for (Individual& g : state.generators)
    for (torch::Tensor& p : g.module().parameters())
      p.set_data(torch::full_like(p, std::numeric_limits<float>::quiet_NaN()));
}

void replace_non_finite(CellState& state, const std::vector<NeighbourCentre>& neighbours, const NetworkShape& shape,
                        const AdamSettings& adam, GenerationWorkingSet& work) {
  // Every local individual checked with one wait; the rest is for faults only.
  std::vector<const Individual*> locals;
  for (const std::vector<Individual>* role : {&state.generators, &state.discriminators})
    for (const Individual& i : *role) locals.push_back(&i);
  const std::vector<bool> finite_local = Individual::are_finite(locals);
  if (std::all_of(finite_local.begin(), finite_local.end(), [](bool f) { return f; })) return;
  for (const Role role : {Role::kGenerator, Role::kDiscriminator}) {
    std::vector<Individual>& local = role == Role::kGenerator ? state.generators : state.discriminators;
    const std::size_t offset = role == Role::kGenerator ? 0 : state.generators.size();
    std::optional<Individual> donor;  // the first finite neighbour centre, read when first needed
    int donor_cell = -1;
    bool searched = false;
    for (std::size_t i = 0; i < local.size(); ++i) {
      if (finite_local[offset + i]) continue;  // as it was: local[i] is unchanged until now
      if (!searched) {
        searched = true;
        for (const NeighbourCentre& n : neighbours) {
          Individual candidate = neighbour_individual(n, role, shape, adam, /*whole=*/true, work.device);
          if (!candidate.is_finite()) continue;
          donor = std::move(candidate);
          donor_cell = n.cell;
          break;
        }
      }
      if (donor) {
        local[i] = donor->clone();
        work.events.push_back(fmt::format("{} {} non-finite: discarded, replaced by a copy of cell {}'s centre {}",
                                          role_name(role), i, donor_cell, role_name(role)));
        continue;
      }
      const auto finite = std::find_if(local.begin(), local.end(), [](const Individual& x) { return x.is_finite(); });
      if (finite == local.end())
        throw std::runtime_error(fmt::format("cell {}: every {} of the neighbourhood is non-finite", state.cell,
                                             role_name(role)));
      local[i] = finite->clone();
      work.events.push_back(fmt::format("{} {} non-finite: discarded, replaced by a copy of local {} {} (no finite "
                                        "neighbour centre)",
                                        role_name(role), i, role_name(role), finite - local.begin()));
    }
  }
}

void gather_neighbourhood(CellState& state, const std::vector<NeighbourCentre>& neighbours, const NetworkShape& shape,
                          const AdamSettings& adam, GenerationWorkingSet& work) {
  // The two sets of neighbour generators are never held at once.
  state.neighbour_generators.clear();
  for (const NeighbourCentre& n : neighbours) {
    work.neighbour_generators.push_back(neighbour_individual(n, Role::kGenerator, shape, adam, /*whole=*/false, work.device));
    work.neighbour_discriminators.push_back(
        neighbour_individual(n, Role::kDiscriminator, shape, adam, /*whole=*/false, work.device));
  }
  for (auto& g : state.generators) {
    work.generator_pool.push_back(&g);
    work.generator_origin.push_back(nullptr);
  }
  for (auto& d : state.discriminators) {
    work.discriminator_pool.push_back(&d);
    work.discriminator_origin.push_back(nullptr);
  }
  std::vector<const Individual*> gathered;  // G and D of each neighbour, checked with one wait
  for (std::size_t k = 0; k < neighbours.size(); ++k)
    gathered.insert(gathered.end(), {&work.neighbour_generators[k], &work.neighbour_discriminators[k]});
  const std::vector<bool> finite = Individual::are_finite(gathered);
  for (std::size_t k = 0; k < neighbours.size(); ++k) {
    for (const Role role : {Role::kGenerator, Role::kDiscriminator}) {
      const bool g = role == Role::kGenerator;
      Individual& n = g ? work.neighbour_generators[k] : work.neighbour_discriminators[k];
      if (!finite[2 * k + (g ? 0 : 1)]) {  // never a fitness opponent or a parent (docs/operations.md, "Faults: what is survived")
        work.events.push_back(fmt::format("cell {}'s centre {} non-finite: left out of the neighbourhood",
                                          neighbours[k].cell, role_name(role)));
        continue;
      }
      (g ? work.generator_pool : work.discriminator_pool).push_back(&n);
      (g ? work.generator_origin : work.discriminator_origin).push_back(&neighbours[k]);
    }
  }
}

void seed_generation(const Config& config, const CellState& state, GenerationWorkingSet& work) {
  const std::uint64_t stream =
      (static_cast<std::uint64_t>(state.cell) << 32) ^ static_cast<std::uint64_t>(state.generation);
  work.generator = at::detail::createCPUGenerator(derive_seed(config.seed, Stream::kCellTraining, stream));
  work.rng = SplitMix64(derive_seed(config.seed, Stream::kCellTraining, stream ^ (1ULL << 63)));
  work.global_seed = derive_seed(config.seed, Stream::kCellTraining, stream ^ (1ULL << 62));
  work.latent_seed = derive_seed(config.seed, Stream::kCellTraining, stream ^ (1ULL << 61));
  work.fitness_seed = derive_seed(config.seed, Stream::kCellTraining, stream ^ (1ULL << 60));
}

at::Generator latent_generator(const GenerationWorkingSet& work, torch::Device device) {
  return device.is_cpu() ? work.generator : generator_on(device, work.latent_seed);
}

void draw_generation_losses(const TrainingConfig& training, CellState& state, SplitMix64& rng) {
  if (training.loss != LossKind::kMustangs) return;
  for (std::size_t i = 0; i < state.generators.size(); ++i) {
    state.generators[i].loss = draw_mustangs_loss(rng);
    state.discriminators[i].loss = discriminator_loss_for(state.generators[i].loss);
  }
}

void draw_fitness_samples(const TrainingConfig& training, const TrainingData& data, std::int64_t latent_dim,
                          GenerationWorkingSet& work) {
  const torch::Tensor index = torch::randint(data.size(), {training.fitness_samples}, work.generator, torch::kLong);
  work.fitness_real = data.rows(to_device_without_waiting(index, data.device()));
  const std::vector<std::int64_t> sizes = {training.fitness_samples, latent_dim};
  work.fitness_latent =
      data.device().is_cpu()
          ? torch::randn(sizes, work.generator, torch::kFloat32)
          : torch::randn(sizes, generator_on(data.device(), work.fitness_seed),
                         torch::TensorOptions().dtype(torch::kFloat32).device(data.device()));
  work.played = PlayedOutputs{};
}

bool game_decides_nothing(const TrainingConfig& training, const GenerationWorkingSet& work) {
  return work.generator_pool.size() == 1 && work.discriminator_pool.size() == 1 &&
         training.replacement == ReplacementRule::kAlways;
}

bool copies_score_decides_nothing(const TrainingConfig& training) {
  return training.population_size == 1 && training.replacement == ReplacementRule::kAlways;
}

void evaluate_fitness(const TrainingConfig& training, const TrainingData& data, std::int64_t latent_dim,
                      GenerationWorkingSet& work) {
  draw_fitness_samples(training, data, latent_dim, work);
  play_every_pair(work.generator_pool, work.discriminator_pool, work.fitness_real, work.fitness_latent, training.bce,
                  &work.played, work.game);
}

void play_every_pair(const std::vector<Individual*>& generators, const std::vector<Individual*>& discriminators,
                     const torch::Tensor& real, const torch::Tensor& z, BceForm bce, PlayedOutputs* reuse,
                     PairGame* game) {
  if (game != nullptr) {
    game->play(generators, discriminators, real, z, bce, reuse);
    return;
  }
  PairGame own;
  own.play(generators, discriminators, real, z, bce, reuse);
}

void play_one_pair_at_a_time(const std::vector<Individual*>& generators,
                             const std::vector<Individual*>& discriminators, const torch::Tensor& real,
                             const torch::Tensor& z, BceForm bce, PlayedOutputs* reuse) {
  torch::NoGradGuard no_grad;
  // The output of `forward` for `who`, from `reuse` when it has it.
  const auto output = [reuse](std::map<const Individual*, torch::Tensor> PlayedOutputs::*table, const Individual* who,
                              const auto& forward) {
    if (!reuse) return forward();
    auto& known = reuse->*table;
    const auto it = known.find(who);
    if (it != known.end()) return it->second;
    return known[who] = forward();
  };
  std::vector<torch::Tensor> d_real;
  for (Individual* d : discriminators) {
    d->discriminator()->eval();
    d_real.push_back(output(&PlayedOutputs::d_real, d, [&] { return d->discriminator()->forward(real); }));
  }
  // Every pair's two losses stay on the device; they are read in one copy
  // and summed in the order the pairs were played.
  std::vector<torch::Tensor> losses;
  for (Individual* g : generators) {
    g->generator()->eval();
    const torch::Tensor fake = output(&PlayedOutputs::fakes, g, [&] { return g->generator()->forward(z); });
    for (std::size_t j = 0; j < discriminators.size(); ++j) {
      const torch::Tensor d_fake = discriminators[j]->discriminator()->forward(fake);
      losses.push_back(generator_loss(g->loss, d_fake, bce));
      losses.push_back(discriminator_loss(discriminator_loss_for(g->loss), d_real[j], d_fake, bce));
    }
  }
  const std::vector<double> values = host_values(losses);
  std::vector<double> d_total(discriminators.size(), 0.0);
  std::size_t at = 0;
  for (Individual* g : generators) {
    double g_total = 0.0;
    for (std::size_t j = 0; j < discriminators.size(); ++j) {
      g_total += values[at++];
      d_total[j] += values[at++];
    }
    g->fitness = g_total / static_cast<double>(discriminators.size());
  }
  for (std::size_t j = 0; j < discriminators.size(); ++j)
    discriminators[j]->fitness = d_total[j] / static_cast<double>(generators.size());
  for (Individual* g : generators) g->generator()->train();
  for (Individual* d : discriminators) d->discriminator()->train();
}

void drop_what_scoring_copies_needs(GenerationWorkingSet& work) {
  work.fitness_real = torch::Tensor();
  work.fitness_latent = torch::Tensor();
  work.played = PlayedOutputs{};
  work.generator_pool.clear();
  work.discriminator_pool.clear();
  work.generator_origin.clear();
  work.discriminator_origin.clear();
  work.neighbour_discriminators.clear();
}

void select_by_tournament(const TrainingConfig& training, GenerationWorkingSet& work) {
  work.selected_generators = tournament_winners(work.generator_pool, work.generator_origin, training.population_size,
                                                training.tournament_size, work.rng);
  work.selected_discriminators = tournament_winners(work.discriminator_pool, work.discriminator_origin,
                                                    training.population_size, training.tournament_size, work.rng);
}

std::vector<Individual> tournament_winners(const std::vector<Individual*>& pool,
                                           const std::vector<const NeighbourCentre*>& origin, std::int64_t count,
                                           std::int64_t tournament, SplitMix64& rng) {
  std::vector<Individual> winners;
  for (std::int64_t k = 0; k < count; ++k) {
    std::size_t best = pool.size();
    for (std::int64_t t = 0; t < tournament; ++t) {
      const std::size_t candidate = rng.below(pool.size());
      if (best == pool.size() || finite_or_inf(pool[candidate]->fitness) < finite_or_inf(pool[best]->fitness))
        best = candidate;
    }
    if (origin[best] == nullptr) {
      winners.push_back(pool[best]->snapshot());
    } else {
      const Individual& seen = *pool[best];
      winners.push_back(
          neighbour_individual(*origin[best], seen.role(), seen.shape(), seen.adam_settings(), true, seen.device()));
      winners.back().fitness = seen.fitness;
    }
  }
  return winners;
}

void mutate_learning_rate(const TrainingConfig& training, Individual& individual, SplitMix64& rng) {
  const double lr0 = training.learning_rate;
  if (rng.uniform() < training.mutation_probability) {
    const double delta = training.mutation_scale * rng.normal(-lr0 / 10.0, lr0);
    individual.set_learning_rate(std::max(0.0, individual.learning_rate() + delta));
  }
  // A copy decoded from bytes (selection, exchange) has its recorded lr in
  // Adam, so this is set before every step, mutated or not.
  if (!training.mutated_lr_reaches_adam) individual.set_adam_learning_rate(lr0);
}

}  // namespace cellgan
