// The per_class layout, master half (see per_class_results.h).
#include "master/per_class_results.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/dataset.h"
#include "common/run_files.h"
#include "common/error.h"
#include "common/image_files.h"
#include "common/layout_rules.h"
#include "common/log.h"
#include "common/nn/class_generator.h"
#include "common/nn/classifier.h"
#include "common/rng.h"
#include "master/final_ensemble.h"
#include "master/run_directory.h"

namespace cellgan {
namespace {

// Samples per class in classes.png.
constexpr std::int64_t kRowImages = 10;

const Config& checked(const Config& config, int workers) {
  if (const std::string misfit = workers_misfit(config, workers); !misfit.empty())
    throw InputError(fmt::format("{}: workers: {} worker ranks {}", config.source, workers, misfit));
  return config;
}

std::vector<std::string> assignment_lines(const char* what, const Partition& p, const std::vector<int>& ranks) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("{}: {} workers, per_class, {} classes", what, p.workers, p.owner.size()));
  for (std::size_t w = 0; w < ranks.size(); ++w)
    lines.push_back(fmt::format("assign: worker rank {} <- classes {}", ranks[w], fmt::join(p.cells_of[w], ",")));
  return lines;
}

std::vector<float> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kCPU).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

std::vector<double> class_proportions(const Config& config) {
  std::vector<double> counts(static_cast<std::size_t>(config.grid.rows), 0.0);
  for (std::uint8_t label : load_labels(config.data, Split::kTrain))
    if (label < counts.size()) counts[label] += 1.0;
  for (std::size_t c = 0; c < counts.size(); ++c)
    if (counts[c] < 2.0)
      throw InputError(fmt::format("{}: data: class {} has {} training image{} in {}{}: expected 2 or more of every "
                                   "class 0..{} for layout per_class",
                                   config.source, c, counts[c], counts[c] == 1.0 ? "" : "s",
                                   dataset_folder(config.data),
                                   config.data.train_limit > 0
                                       ? fmt::format(" (data.train_limit {})", config.data.train_limit)
                                       : "",
                                   counts.size() - 1));
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  for (double& c : counts) c /= total;
  return counts;
}

PerClassResults::PerClassResults(const Config& config, int workers)
    : config_(checked(config, workers)),
      grid_(static_cast<int>(config.grid.rows), 1),
      partition_(partition_cells(grid_, workers)),
      proportions_(class_proportions(config)) {}

std::vector<std::string> PerClassResults::assignment() const {
  std::vector<int> ranks(static_cast<std::size_t>(partition_.workers));
  std::iota(ranks.begin(), ranks.end(), 1);
  return assignment_lines("start", partition_, ranks);
}

std::vector<std::string> PerClassResults::reassign(const std::vector<int>& members) const {
  return assignment_lines("reassign", partition_cells(grid_, static_cast<int>(members.size())), members);
}

RunResult PerClassResults::finish(std::vector<ResultMessage> results, const FinishContext& context) {
  std::vector<Ensemble> ensembles = gather_finite_ensembles(results, context, "class ensembles");
  if (ensembles.size() != static_cast<std::size_t>(grid_.cell_count()))
    throw std::runtime_error(fmt::format("per_class: {} of {} classes have a finite generator: no conditional "
                                         "generator without every class",
                                         ensembles.size(), grid_.cell_count()));
  ClassGenerator generator(std::move(ensembles), proportions_);

  // Each class's generator against the classifier, and one row of it for classes.png.
  ScoreClassifier classifier = load_classifier(classifier_file(config_), torch::Device(context.master_device));
  const std::int64_t per_class = std::max<std::int64_t>(2, config_.evaluation.final_samples / generator.classes());
  std::vector<CellResult> scored;
  std::vector<float> rows;
  double mean_accuracy = 0.0;
  for (int c = 0; c < generator.classes(); ++c) {
    const std::uint64_t seed = derive_seed(config_.seed, Stream::kEvaluation, 16 + static_cast<std::uint64_t>(c));
    const torch::Tensor samples = generator.sample_class(c, std::max(per_class, kRowImages), seed);
    const double accuracy = class_accuracy(classifier, samples.narrow(0, 0, per_class), c);
    mean_accuracy += accuracy / generator.classes();
    scored.push_back({c, {{"class_accuracy", accuracy}}});
    const std::vector<float> row = to_vector(samples.narrow(0, 0, kRowImages));
    rows.insert(rows.end(), row.begin(), row.end());
    log::info("class {}: {:.1f}% of {} samples classified as {}", c, 100.0 * accuracy, per_class, c);
  }
  std::vector<Ensemble> whole;
  whole.push_back(std::move(generator.mixture()));
  CellResult all = score_ensembles(config_, whole, context.scorer).front();
  all.scores["class_accuracy"] = mean_accuracy;
  scored.push_back(all);
  generator.mixture() = std::move(whole.front());

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - context.started).count();
  const auto at = [&](const char* name) { return (std::filesystem::path(config_.output_dir) / name).string(); };
  ImageLabels labels{"one row per class", {}};
  for (int c = 0; c < generator.classes(); ++c) labels.rows.push_back(fmt::format("class {}", c));
  write_image_grid_png(at(run_files::kClasses), rows, kRowImages * generator.classes(), kImageSide, kImageSide,
                       kRowImages, labels);
  write_file_atomic(at(run_files::kClassIndex), generator.index_json());
  write_result_files(config_, description(), config_.output_dir, generator.mixture(), scored, scored.size() - 1, seconds, context);
  context.run.event(fmt::format("finished: conditional generator of {} classes, mean class accuracy {:.3f}",
                                generator.classes(), mean_accuracy));

  RunResult out;
  out.output_dir = config_.output_dir;
  out.best = best_label(description(), kGridEnsemble);
  out.best_generators = generator.mixture().generators.size();
  out.scores = all.scores;
  out.seconds = seconds;
  return out;
}

}  // namespace cellgan
