// The mixture ES of one cell's generation, step 7 (see generation_steps.h).
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "common/nn/ensemble.h"
#include "common/step_schedule.h"
#include "worker/generation_steps.h"

namespace cellgan {
namespace {

double finite_or_inf(double v) { return std::isfinite(v) ? v : INFINITY; }

std::vector<double> normalised(std::vector<double> w) {
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  if (total <= 0.0) return std::vector<double>(w.size(), 1.0 / static_cast<double>(w.size()));
  for (double& x : w) x /= total;
  return w;
}

// Rows of the mixture's score sample a generation's record keeps: all of
// them for toy data, grid_images for images, on preview generations only
// (evaluation.preview_every, and the last generation).
std::int64_t preview_rows(const Config& config, std::int64_t generation) {
  // preview_every 0 writes none, not even at the last generation.
  if (config.evaluation.preview_every <= 0 || !preview_generation(config, generation)) return 0;
  const std::int64_t n = config.training.score_samples;
  return is_toy(config.data.dataset) ? n : std::min(n, config.evaluation.grid_images);
}

// The samples the mixture ES scores its weight vectors on, drawn once:
// each generator's rows are its own latent stream (seeded from `seed` and
// its slot) passed through it, as many as the largest of its counts, and a
// weight vector takes the first `count` of each. So the vectors see the
// same samples where their counts agree (common random numbers), and both
// together cost about one scoring: every row's features are computed once.
class SharedDraws {
 public:
  SharedDraws(std::vector<Individual*>& mixture, const std::vector<std::vector<std::int64_t>>& counts,
              std::uint64_t seed, SampleScorer& scorer)
      : samples_(mixture.size()), features_(mixture.size()) {
    for (std::size_t i = 0; i < mixture.size(); ++i) {
      std::int64_t most = 0;
      for (const auto& c : counts) most = std::max(most, c[i]);
      if (most == 0) continue;
      torch::Generator gen = at::detail::createCPUGenerator(derive_seed(seed, Stream::kCellTraining, i));
      std::vector<Individual*> one{mixture[i]};
      samples_[i] = sample_mixture(one, {1.0}, most, gen);
      features_[i] = scorer.features(samples_[i]);
    }
  }

  // The report of the rows `counts` takes; their first `rows` samples go
  // into `preview` (on the CPU).
  std::map<std::string, double> report(const std::vector<std::int64_t>& counts, std::int64_t rows,
                                       std::vector<float>& preview, SampleScorer& scorer) const {
    std::vector<torch::Tensor> features, shown;
    std::int64_t left = rows;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] == 0) continue;
      features.push_back(features_[i].narrow(0, 0, counts[i]));
      if (left <= 0) continue;
      shown.push_back(samples_[i].narrow(0, 0, std::min(left, counts[i])));
      left -= shown.back().size(0);
    }
    if (!shown.empty()) {
      const torch::Tensor kept = torch::cat(shown).to(torch::kCPU).contiguous();
      preview.assign(kept.data_ptr<float>(), kept.data_ptr<float>() + kept.numel());
    }
    return scorer.report_features(torch::cat(features));
  }

 private:
  std::vector<torch::Tensor> samples_;   // per generator: [its most rows, columns], or undefined
  std::vector<torch::Tensor> features_;  // per generator: SampleScorer::features of its samples
};

}  // namespace

MixtureOutcome evolve_mixture(const Config& config, SampleScorer& scorer, const std::string& objective,
                              std::int64_t generation, CellState& state, SplitMix64& rng, bool score_always) {
  const TrainingConfig& t = config.training;
  std::vector<Individual*> mixture;
  for (auto& g : state.generators) mixture.push_back(&g);
  for (auto& g : state.neighbour_generators) mixture.push_back(&g);
  // A non-finite generator keeps its slot but never its weight (docs/operations.md, "Faults: what is survived").
  std::vector<bool> finite;
  MixtureOutcome outcome;
  for (std::size_t i = 0; i < mixture.size(); ++i) {
    finite.push_back(mixture[i]->is_finite());
    if (!finite.back())
      outcome.events.push_back(fmt::format("mixture generator {} ({}) non-finite: weight 0", i,
                                           i < state.generators.size() ? "local" : "a neighbour's"));
  }
  if (std::none_of(finite.begin(), finite.end(), [](bool f) { return f; }))
    throw std::logic_error("evolve_mixture: no finite generator in the mixture");
  const auto without_non_finite = [&](std::vector<double> w) {
    if (std::all_of(finite.begin(), finite.end(), [](bool f) { return f; })) return w;
    for (std::size_t i = 0; i < w.size(); ++i)
      if (!finite[i]) w[i] = 0.0;
    return normalised(w);
  };
  state.mixture_weights = without_non_finite(state.mixture_weights);
  std::vector<double> candidate = state.mixture_weights;
  for (double& w : candidate) w = std::max(0.0, w + rng.normal(0.0, t.mixture_sigma));
  candidate = without_non_finite(normalised(candidate));
  const std::uint64_t sample_seed = rng.next();
  const std::int64_t rows = preview_rows(config, generation);
  if (!score_always && mixture.size() == 1 && !preview_generation(config, generation)) return outcome;
  const bool same = candidate == state.mixture_weights;
  const std::vector<std::int64_t> current_counts = Ensemble::sample_counts(state.mixture_weights, t.score_samples);
  const std::vector<std::int64_t> candidate_counts = Ensemble::sample_counts(candidate, t.score_samples);
  using Counts = std::vector<std::vector<std::int64_t>>;
  const SharedDraws draws(mixture, same ? Counts{current_counts} : Counts{current_counts, candidate_counts}, sample_seed,
                          scorer);
  std::vector<float> current_preview, challenger_preview;
  auto current = draws.report(current_counts, rows, current_preview, scorer);
  // A candidate equal to the current weights (always so for a mixture of
  // one generator, as per_class's) would score the same: it is not scored.
  if (same) {
    const double current_score = current.at(objective);
    outcome.scores = std::move(current);
    outcome.preview = std::move(current_preview);
    state.mixture_objective = std::min(current_score, finite_or_inf(current_score));
    return outcome;
  }
  auto challenger = draws.report(candidate_counts, rows, challenger_preview, scorer);
  const double current_score = current.at(objective);
  const double candidate_score = challenger.at(objective);
  outcome.improved = candidate_score < current_score;
  if (outcome.improved) state.mixture_weights = candidate;
  outcome.scores = outcome.improved ? std::move(challenger) : std::move(current);
  outcome.preview = std::move(outcome.improved ? challenger_preview : current_preview);
  state.mixture_objective = std::min(candidate_score, finite_or_inf(current_score));
  return outcome;
}

}  // namespace cellgan
