// Step 6 of a generation (generation_steps.h): the trained copies' score,
// what is discarded of them, and the replacement; then step 7's first half
// and the record.
#include "worker/generation_steps.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "worker/pair_game.h"

namespace cellgan {
namespace {

// One cell's trained copies, as note_discards() reads them.
struct TrainedCopies {
  std::vector<Individual*> generators, discriminators;
  GenerationWorkingSet* work = nullptr;
};

// What replace_worst() will discard of each cell's trained copies, and why (docs/operations.md, "Faults: what is
// survived"): a line in the cell's work.events for each, and a NaN fitness, so that replace_worst() need not look at
// the weights again. The weights of every copy not discarded already are checked with one wait for them all.
void note_discards(const std::vector<TrainedCopies>& cells) {
  const auto each_copy = [&cells](auto&& visit) {
    for (const TrainedCopies& c : cells)
      for (const Role role : {Role::kGenerator, Role::kDiscriminator}) {
        const bool g = role == Role::kGenerator;
        const std::vector<Individual*>& copies = g ? c.generators : c.discriminators;
        const std::vector<bool>& diverged = g ? c.work->diverged_generators : c.work->diverged_discriminators;
        for (std::size_t i = 0; i < copies.size(); ++i)
          visit(*c.work, role, i, *copies[i], i < diverged.size() && diverged[i]);
      }
  };
  std::vector<const Individual*> unjudged;  // lost nothing in training, finite fitness
  each_copy([&unjudged](GenerationWorkingSet&, Role, std::size_t, Individual& copy, bool lost) {
    if (!lost && std::isfinite(copy.fitness)) unjudged.push_back(&copy);
  });
  const std::vector<bool> finite = Individual::are_finite(unjudged);
  std::size_t next = 0;
  each_copy([&finite, &next](GenerationWorkingSet& work, Role role, std::size_t i, Individual& copy, bool lost) {
    const char* why = lost                           ? "a non-finite loss in training"
                      : !std::isfinite(copy.fitness) ? "a non-finite fitness"
                      : !finite[next++]              ? "non-finite weights"
                                                     : nullptr;
    if (!why) return;
    copy.fitness = std::numeric_limits<double>::quiet_NaN();
    work.events.push_back(fmt::format("trained {} copy {} has {}: discarded", role_name(role), i, why));
  });
}

}  // namespace

void score_trained_copies(BceForm bce, GenerationWorkingSet& work) { score_trained_copies(bce, {&work}); }

void score_trained_copies(BceForm bce, const std::vector<GenerationWorkingSet*>& works) {
  if (works.empty()) return;
  PairGame own;
  PairGame& game = works.front()->game ? *works.front()->game : own;
  // Copies of G against the gathered Ds, then copies of D against the
  // gathered Gs; each game also rescores the pool side, which is put back.
  std::vector<std::vector<Individual*>> copies_g(works.size()), copies_d(works.size());
  for (const bool generators : {true, false}) {
    std::vector<CellGame> games;
    std::vector<std::vector<double>> saved(works.size());
    for (std::size_t c = 0; c < works.size(); ++c) {
      GenerationWorkingSet& w = *works[c];
      std::vector<Individual*>& copies = generators ? copies_g[c] : copies_d[c];
      for (Individual& i : generators ? w.selected_generators : w.selected_discriminators) copies.push_back(&i);
      for (const Individual* i : generators ? w.discriminator_pool : w.generator_pool) saved[c].push_back(i->fitness);
      games.push_back(generators ? CellGame{copies, w.discriminator_pool, w.fitness_real, w.fitness_latent, &w.played}
                                 : CellGame{w.generator_pool, copies, w.fitness_real, w.fitness_latent, &w.played});
    }
    game.play_cells(games, bce);
    for (std::size_t c = 0; c < works.size(); ++c) {
      const std::vector<Individual*>& pool = generators ? works[c]->discriminator_pool : works[c]->generator_pool;
      for (std::size_t k = 0; k < pool.size(); ++k) pool[k]->fitness = saved[c][k];
    }
  }
  std::vector<TrainedCopies> trained;
  for (std::size_t c = 0; c < works.size(); ++c) trained.push_back({copies_g[c], copies_d[c], works[c]});
  note_discards(trained);
}

void take_training_losses(GenerationWorkingSet& work) {
  std::vector<Individual*> copies_g, copies_d;
  for (std::size_t i = 0; i < work.selected_generators.size(); ++i) {
    copies_g.push_back(&work.selected_generators[i]);
    copies_g.back()->fitness = work.training_generator_losses.at(i);
  }
  for (std::size_t j = 0; j < work.selected_discriminators.size(); ++j) {
    copies_d.push_back(&work.selected_discriminators[j]);
    copies_d.back()->fitness = work.training_discriminator_losses.at(j);
  }
  note_discards({{copies_g, copies_d, &work}});
}

int replace_worst(std::vector<Individual>& local, std::vector<Individual>& copies, std::int64_t n_replacements,
                  ReplacementRule rule, bool check_weights) {
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
  // Copies with non-finite fitness or weights are discarded (docs/operations.md, "Faults: what is survived").
  std::vector<bool> usable(copies.size());
  std::vector<const Individual*> to_check;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    usable[i] = std::isfinite(copies[i].fitness);
    if (usable[i] && check_weights) to_check.push_back(&copies[i]);
  }
  if (!to_check.empty()) {
    const std::vector<bool> finite = Individual::are_finite(to_check);
    for (std::size_t i = 0, next = 0; i < copies.size(); ++i)
      if (usable[i]) usable[i] = finite[next++];
  }
  int replaced = 0;
  std::size_t next_copy = 0;
  for (std::int64_t k = 0; k < n_replacements && k < static_cast<std::int64_t>(worst.size()); ++k) {
    while (next_copy < best.size() && !usable[best[next_copy]]) ++next_copy;
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

void keep_neighbour_generators(CellState& state, GenerationWorkingSet& work) {
  // Already without Adam state; only sampled from now on.
  state.neighbour_generators = std::move(work.neighbour_generators);
  work.neighbour_discriminators.clear();
}

void record_outcome(CellState& state, MixtureOutcome mixture, GenerationRecord& record) {
  state.generation += 1;
  record.generator_loss = state.centre_generator().fitness;
  record.discriminator_loss = state.centre_discriminator().fitness;
  for (const auto& g : state.generators) record.generator_lrs.push_back(g.learning_rate());
  for (const auto& d : state.discriminators) record.discriminator_lrs.push_back(d.learning_rate());
  record.mixture_weights = state.mixture_weights;
  record.mixture_improved = mixture.improved;
  record.scores = std::move(mixture.scores);
  record.preview = std::move(mixture.preview);
}

}  // namespace cellgan
