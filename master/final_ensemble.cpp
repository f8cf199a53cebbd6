// Scoring the cells' ensembles and writing the result (see final_ensemble.h).
#include "master/final_ensemble.h"

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "common/image_files.h"
#include "common/layout_description.h"
#include "common/log.h"
#include "common/rng.h"
#include "common/run_files.h"
#include "common/run_records.h"
#include "master/sample_png.h"

namespace cellgan {

std::vector<CellResult> score_ensembles(const Config& config, std::vector<Ensemble>& ensembles,
                                        SampleScorer& scorer) {
  const std::uint64_t seed = derive_seed(config.seed, Stream::kEvaluation, 0);
  const std::string objective = objective_name(config);
  std::vector<CellResult> results;
  for (Ensemble& e : ensembles) {
    const torch::Tensor samples = e.sample(config.evaluation.final_samples, seed);
    CellResult r;
    r.cell = e.cell;
    r.scores = scorer.report(samples);
    log::info("{} ensemble ({} generators): {} {:.4f}", ensemble_label(e.cell), e.generators.size(), objective,
              r.scores.at(objective));
    results.push_back(std::move(r));
  }
  return results;
}

std::vector<std::string> drop_non_finite_generators(std::vector<Ensemble>& ensembles) {
  std::vector<std::string> lines;
  for (auto e = ensembles.begin(); e != ensembles.end();) {
    double total = 0.0;
    std::vector<const Individual*> generators;  // checked with one wait
    for (const Individual& g : e->generators) generators.push_back(&g);
    const std::vector<bool> finite = Individual::are_finite(generators);
    for (std::size_t i = e->generators.size(); i-- > 0;) {
      if (finite[i]) continue;
      lines.push_back(fmt::format("{} ensemble: generator {} non-finite: left out", ensemble_label(e->cell), i));
      e->generators.erase(e->generators.begin() + static_cast<std::ptrdiff_t>(i));
      e->weights.erase(e->weights.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (double w : e->weights) total += w;
    if (e->generators.empty() || !(total > 0.0)) {
      lines.push_back(fmt::format("{} ensemble: no finite generator with weight: left out of the choice",
                                  ensemble_label(e->cell)));
      e = ensembles.erase(e);
      continue;
    }
    for (double& w : e->weights) w /= total;
    ++e;
  }
  return lines;
}

std::string ensemble_label(int cell) { return cell == kGridEnsemble ? "grid" : fmt::format("cell {}", cell); }

std::string best_label(const LayoutDescription& layout, int cell) {
  return layout.best_label(cell == kGridEnsemble ? std::nullopt : std::optional<int>(cell));
}

Ensemble grid_ensemble(const std::vector<Ensemble>& cells, std::int64_t population_size) {
  if (cells.empty()) throw std::invalid_argument("grid_ensemble: no cell ensembles");
  Ensemble grid;
  grid.cell = kGridEnsemble;
  grid.shape = cells.front().shape;
  for (const Ensemble& e : cells) {
    const auto own = std::min<std::size_t>(static_cast<std::size_t>(population_size), e.generators.size());
    for (std::size_t i = 0; i < own; ++i) grid.generators.push_back(e.generators[i].clone_weights());
  }
  grid.weights.assign(grid.generators.size(), 1.0 / static_cast<double>(grid.generators.size()));
  return grid;
}

std::size_t best_result(const std::vector<CellResult>& results, const std::string& objective) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < results.size(); ++i) {
    const double f = results[i].scores.at(objective);
    const double b = results[best].scores.at(objective);
    if ((std::isfinite(f) && !std::isfinite(b)) || f < b) best = i;
  }
  return best;
}

void write_ensemble_png(const Config& config, const std::string& path, Ensemble& ensemble, std::int64_t count) {
  const std::uint64_t seed = derive_seed(config.seed, Stream::kEvaluation, 1);
  const torch::Tensor s = ensemble.sample(is_toy(config.data.dataset) ? 2500 : count, seed).to(torch::kCPU).contiguous();
  write_samples_png(config, path, std::vector<float>(s.data_ptr<float>(), s.data_ptr<float>() + s.numel()));
}

void write_result_files(const Config& config, const LayoutDescription& layout, const std::string& dir,
                        Ensemble& best, const std::vector<CellResult>& results, std::size_t best_index,
                        double seconds, const FinishContext& context) {
  const std::string& master_kernels = context.master_kernels;
  const std::vector<std::string>& worker_kernels = context.worker_kernels;
  namespace fs = std::filesystem;
  const auto at = [&](const char* name) { return (fs::path(dir) / name).string(); };
  best.save(at(run_files::kEnsemble));
  write_ensemble_png(config, at(run_files::kSamples), best, config.evaluation.grid_images);

  ResultRecord result;
  for (const auto& r : results) {
    if (r.cell == kGridEnsemble) {
      result.grid_ensemble = r.scores;
    } else {
      result.cells.push_back({r.cell, r.scores});
    }
  }
  result.best = ensemble_label(results[best_index].cell);
  result.best_cell = results[best_index].cell;
  result.best_label = best_label(layout, results[best_index].cell);
  result.objective = objective_name(config);
  result.scores = results[best_index].scores;
  result.mixture_weights = best.weights;
  result.final_samples = config.evaluation.final_samples;
  result.master_kernels = master_kernels;
  result.worker_kernels = worker_kernels;
  result.master_device = context.master_device;
  result.worker_devices = context.worker_devices;
  result.precision = to_string(config.training.precision);
  result.seconds = seconds;

  std::string summary = fmt::format(
      "cellgan run summary\n  dataset      {}\n  layout       {}\n  grid         {}x{} ({}), {} generations\n"
      "  best         {}\n",
      to_string(config.data.dataset), to_string(config.layout), config.grid.rows, config.grid.cols,
      layout.topology(config.grid.neighbourhood), config.training.generations,
      best_label(layout, results[best_index].cell));
  for (const auto& [name, value] : results[best_index].scores) summary += fmt::format("  {:<12} {:.4f}\n", name, value);
  std::vector<std::string> kernels = worker_kernels;
  std::sort(kernels.begin(), kernels.end());
  kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
  summary += fmt::format("  BLAS         {} (workers), {} (master)\n", fmt::join(kernels, " / "), master_kernels);
  std::vector<std::string> devices = context.worker_devices;
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  summary += fmt::format("  device       {} (workers), {} (master)\n", fmt::join(devices, " / "), context.master_device);
  // What the folder holds, as it is: result.json and summary.txt now, report.html right after.
  std::string files;
  for (const char* name : {run_files::kEnsemble, run_files::kSamples, run_files::kClasses, run_files::kClassIndex,
                           run_files::kLayoutRecord, run_files::kMetrics, run_files::kEvents, run_files::kRunState,
                           run_files::kPreviews, run_files::kCheckpoints})
    if (std::filesystem::exists(std::filesystem::path(dir) / name))
      files += fmt::format(" {}{}", name, std::filesystem::is_directory(std::filesystem::path(dir) / name) ? "/" : "");
  const std::string wall =
      context.earlier_stretches > 0
          ? fmt::format("{:.1f} s in {} stretches (this one {:.1f} s)", context.earlier_seconds + seconds,
                        context.earlier_stretches + 1, seconds)
          : fmt::format("{:.1f} s", seconds);
  summary += fmt::format("  wall time    {}\n  files       {} {} {} {}\n", wall, files, run_files::kResult,
                         run_files::kSummary, run_files::kReport);
  write_file_atomic(at(run_files::kSummary), summary);
  // result.json last: its presence marks a finished run.
  write_file_atomic(at(run_files::kResult), to_json(result));
}

}  // namespace cellgan
