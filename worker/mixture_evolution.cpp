// The mixture ES of one cell's generation, step 7 (see generation_steps.h).
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "common/nn/ensemble.h"
#include "common/nn/member_draws.h"
#include "common/nn/stacked_sampling.h"
#include "common/step_schedule.h"
#include "worker/generation_steps.h"

namespace cellgan {
namespace {

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

// One cell's step 7, in parts, so that a worker classifies the samples of
// all its cells in one call (evolve_mixtures):
// - the constructor draws the candidate weights and the sample seed from
//   the cell's stream, and decides whether the mixture is scored;
// - draw() passes each generator's own latent stream (seeded from the seed
//   and its slot; on a GPU a generator there, generator_on()) through it, as
//   many rows as the larger of its two counts (or set_samples() takes
//   them drawn through one stack with other plans', draw_stacked);
//   a weight vector takes the first `count` rows of each, so the vectors
//   see the same samples where their counts agree (common random numbers);
// - the rows' features are set from scorer.features() of all of them at
//   once (set_features), which is every row's own (scores.h);
// - weighed_features() gives the rows each vector takes (the current
//   one's, then the candidate's unless the same), whose reports
//   (SampleScorer::report_features) set_reports() takes;
// - finish() keeps the better vector.
class MixturePlan {
 public:
  // `finite`: Individual::are_finite() of mixture_of(state).
  MixturePlan(const Config& config, std::int64_t generation, CellState& state, SplitMix64& rng, bool score_always,
              std::vector<bool> finite)
      : state_(state), mixture_(mixture_of(state)), finite_(std::move(finite)) {
    const TrainingConfig& t = config.training;
    // A non-finite generator keeps its slot but never its weight (docs/operations.md, "Faults: what is survived").
    for (std::size_t i = 0; i < mixture_.size(); ++i) {
      if (!finite_.at(i))
        outcome_.events.push_back(fmt::format("mixture generator {} ({}) non-finite: weight 0", i,
                                              i < state.generators.size() ? "local" : "a neighbour's"));
    }
    if (std::none_of(finite_.begin(), finite_.end(), [](bool f) { return f; }))
      throw std::logic_error("evolve_mixture: no finite generator in the mixture");
    state.mixture_weights = without_non_finite(state.mixture_weights);
    candidate_ = state.mixture_weights;
    for (double& w : candidate_) w = std::max(0.0, w + rng.normal(0.0, t.mixture_sigma));
    candidate_ = without_non_finite(normalised(candidate_));
    sample_seed_ = rng.next();
    rows_ = preview_rows(config, generation);
    scored_ = score_always || mixture_.size() > 1 || preview_generation(config, generation);
    same_ = candidate_ == state.mixture_weights;
    current_counts_ = Ensemble::sample_counts(state.mixture_weights, t.score_samples);
    candidate_counts_ = Ensemble::sample_counts(candidate_, t.score_samples);
  }

  // The generators of the cell's mixture: its own, then its neighbours'.
  static std::vector<Individual*> mixture_of(CellState& state) {
    std::vector<Individual*> mixture;
    for (auto& g : state.generators) mixture.push_back(&g);
    for (auto& g : state.neighbour_generators) mixture.push_back(&g);
    return mixture;
  }

  bool scored() const { return scored_; }

  // What each generator draws: as many rows as the larger of its two
  // counts (0: none), from its own latent stream.
  struct Draws {
    std::vector<const Individual*> generators;
    std::vector<std::int64_t> rows;
    std::vector<at::Generator> streams;
  };
  Draws draws() const {
    Draws d;
    for (std::size_t i = 0; i < mixture_.size(); ++i) {
      d.generators.push_back(mixture_[i]);
      d.rows.push_back(std::max(current_counts_[i], same_ ? 0 : candidate_counts_[i]));
      d.streams.push_back(generator_on(mixture_[i]->device(), derive_seed(sample_seed_, Stream::kCellTraining, i)));
    }
    return d;
  }
  // Each generator's rows, draws() drawn (undefined where it draws none).
  void set_samples(std::vector<torch::Tensor> samples) { samples_ = std::move(samples); }
  // draws(), each generator through its own network, into samples().
  void draw() {
    Draws d = draws();
    samples_.assign(mixture_.size(), torch::Tensor());
    for (std::size_t i = 0; i < mixture_.size(); ++i) {
      if (d.rows[i] == 0) continue;
      std::vector<Individual*> one{mixture_[i]};
      samples_[i] = sample_mixture(one, {1.0}, d.rows[i], d.streams[i]);
    }
  }
  const std::vector<torch::Tensor>& samples() const { return samples_; }

  // The features of draw()'s rows, generator by generator, in its order.
  void set_features(std::vector<torch::Tensor> features) { features_ = std::move(features); }

  // A candidate equal to the current weights (always so for a mixture of
  // one generator, as per_class's) would score the same: it is not scored.
  std::vector<torch::Tensor> weighed_features() {
    std::vector<torch::Tensor> out{taken(current_counts_, current_preview_)};
    if (!same_) out.push_back(taken(candidate_counts_, challenger_preview_));
    return out;
  }

  void set_reports(std::vector<std::map<std::string, double>> reports) { reports_ = std::move(reports); }

  MixtureOutcome finish(const std::string& objective) {
    if (!scored_) return std::move(outcome_);
    auto current = std::move(reports_.at(0));
    if (same_) {
      const double current_score = current.at(objective);
      outcome_.scores = std::move(current);
      outcome_.preview = std::move(current_preview_);
      state_.mixture_objective = std::min(current_score, finite_or_inf(current_score));
      return std::move(outcome_);
    }
    auto challenger = std::move(reports_.at(1));
    const double current_score = current.at(objective);
    const double candidate_score = challenger.at(objective);
    outcome_.improved = candidate_score < current_score;
    if (outcome_.improved) state_.mixture_weights = candidate_;
    outcome_.scores = outcome_.improved ? std::move(challenger) : std::move(current);
    outcome_.preview = std::move(outcome_.improved ? challenger_preview_ : current_preview_);
    state_.mixture_objective = std::min(candidate_score, finite_or_inf(current_score));
    return std::move(outcome_);
  }

 private:
  std::vector<double> without_non_finite(std::vector<double> w) const {
    if (std::all_of(finite_.begin(), finite_.end(), [](bool f) { return f; })) return w;
    for (std::size_t i = 0; i < w.size(); ++i)
      if (!finite_[i]) w[i] = 0.0;
    return normalised(w);
  }

  // The feature rows `counts` takes; their first rows_ samples go into
  // `preview` (on the CPU).
  torch::Tensor taken(const std::vector<std::int64_t>& counts, std::vector<float>& preview) const {
    std::vector<torch::Tensor> features, shown;
    std::int64_t left = rows_;
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
    return torch::cat(features);
  }

  CellState& state_;
  std::vector<Individual*> mixture_;
  std::vector<bool> finite_;
  MixtureOutcome outcome_;
  std::vector<double> candidate_;
  std::uint64_t sample_seed_ = 0;
  std::int64_t rows_ = 0;
  bool scored_ = true;
  bool same_ = true;
  std::vector<std::int64_t> current_counts_, candidate_counts_;
  std::vector<torch::Tensor> samples_;   // per generator: [its most rows, columns], or undefined
  std::vector<torch::Tensor> features_;  // per generator: SampleScorer::features of its samples
  std::vector<float> current_preview_, challenger_preview_;
  std::vector<std::map<std::string, double>> reports_;  // of weighed_features(), in order
};

// Every plan's draws through one stack (sample_each_stacked()), each set
// back in its plan.
void draw_stacked(std::vector<MixturePlan*>& plans) {
  MixturePlan::Draws all;
  std::vector<std::size_t> sizes;
  for (MixturePlan* plan : plans) {
    MixturePlan::Draws own = plan->draws();
    sizes.push_back(own.generators.size());
    all.generators.insert(all.generators.end(), own.generators.begin(), own.generators.end());
    all.rows.insert(all.rows.end(), own.rows.begin(), own.rows.end());
    all.streams.insert(all.streams.end(), own.streams.begin(), own.streams.end());
  }
  std::vector<torch::Tensor> samples = sample_each_stacked(all.generators, all.rows, all.streams);
  auto from = samples.begin();
  for (std::size_t p = 0; p < plans.size(); ++p) {
    const auto to = from + static_cast<std::ptrdiff_t>(sizes[p]);
    plans[p]->set_samples({std::make_move_iterator(from), std::make_move_iterator(to)});
    from = to;
  }
}

// The features of every plan's draws in one scorer.features() call, split
// back to each plan, generator by generator; with `stacked` the plans draw
// through one stack (draw_stacked), else each generator through its own
// network.
void classify_together(std::vector<MixturePlan*>& plans, SampleScorer& scorer, bool stacked) {
  if (stacked)
    draw_stacked(plans);
  else
    for (MixturePlan* plan : plans) plan->draw();
  std::vector<torch::Tensor> rows;
  std::vector<std::vector<std::int64_t>> sizes;
  for (MixturePlan* plan : plans) {
    sizes.emplace_back();
    for (const torch::Tensor& s : plan->samples()) {
      sizes.back().push_back(s.defined() ? s.size(0) : 0);
      if (s.defined()) rows.push_back(s);
    }
  }
  if (rows.empty()) return;
  const torch::Tensor features = scorer.features(rows.size() == 1 ? rows.front() : torch::cat(rows));
  std::int64_t at = 0;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    std::vector<torch::Tensor> own;
    for (std::int64_t n : sizes[p]) {
      own.push_back(n > 0 ? features.narrow(0, at, n) : torch::Tensor());
      at += n;
    }
    plans[p]->set_features(std::move(own));
  }
}

}  // namespace

std::vector<MixtureOutcome> evolve_mixtures(const Config& config, SampleScorer& scorer, const std::string& objective,
                                            std::int64_t generation, const std::vector<MixtureCell>& cells,
                                            bool score_always, MixtureBatching batching) {
  const bool one_call = batching != MixtureBatching::kCellByCell;
  // Every cell's generators checked with one wait.
  std::vector<const Individual*> generators;
  for (const MixtureCell& c : cells)
    for (const Individual* g : MixturePlan::mixture_of(*c.state)) generators.push_back(g);
  const std::vector<bool> finite = Individual::are_finite(generators);
  std::vector<MixturePlan> plans;
  plans.reserve(cells.size());
  auto from = finite.begin();
  for (const MixtureCell& c : cells) {
    const auto to = from + static_cast<std::ptrdiff_t>(MixturePlan::mixture_of(*c.state).size());
    plans.emplace_back(config, generation, *c.state, *c.rng, score_always, std::vector<bool>(from, to));
    from = to;
  }
  std::vector<MixturePlan*> scored;
  for (MixturePlan& plan : plans)
    if (plan.scored()) scored.push_back(&plan);
  if (one_call) {  // every feature, then every report, in one call each
    classify_together(scored, scorer, batching == MixtureBatching::kStacked);
    std::vector<torch::Tensor> weighed;
    std::vector<std::size_t> counts;
    for (MixturePlan* plan : scored) {
      std::vector<torch::Tensor> own = plan->weighed_features();
      counts.push_back(own.size());
      weighed.insert(weighed.end(), own.begin(), own.end());
    }
    std::vector<std::map<std::string, double>> reports = scorer.report_features_together(weighed);
    auto next = reports.begin();
    for (std::size_t p = 0; p < scored.size(); ++p) {
      scored[p]->set_reports({std::make_move_iterator(next), std::make_move_iterator(next + counts[p])});
      next += static_cast<std::ptrdiff_t>(counts[p]);
    }
  }
  std::vector<MixtureOutcome> outcomes;
  for (MixturePlan& plan : plans) {
    if (!one_call && plan.scored()) {
      std::vector<MixturePlan*> one{&plan};
      classify_together(one, scorer, /*stacked=*/false);
      std::vector<std::map<std::string, double>> reports;
      for (const torch::Tensor& f : plan.weighed_features()) reports.push_back(scorer.report_features(f));
      plan.set_reports(std::move(reports));
    }
    outcomes.push_back(plan.finish(objective));
  }
  return outcomes;
}

MixtureOutcome evolve_mixture(const Config& config, SampleScorer& scorer, const std::string& objective,
                              std::int64_t generation, CellState& state, SplitMix64& rng, bool score_always) {
  return std::move(
      evolve_mixtures(config, scorer, objective, generation, {MixtureCell{&state, &rng}}, score_always,
                      MixtureBatching::kCellByCell).front());
}

}  // namespace cellgan
