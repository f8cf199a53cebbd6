// The coevolution layout, master half (see coevolution_results.h).
#include "master/coevolution_results.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/log.h"
#include "common/nn/ensemble.h"
#include "common/nn/scores.h"
#include "common/layout_rules.h"
#include "master/final_ensemble.h"
#include "master/run_directory.h"

namespace cellgan {
namespace {

// Checks the worker count before the partition does, to say it in mpirun's terms.
const Config& checked(const Config& config, int workers) {
  if (const std::string misfit = workers_misfit(config, workers); !misfit.empty())
    throw InputError(fmt::format("{}: workers: {} worker ranks {}", config.source, workers, misfit));
  return config;
}

}  // namespace

CoevolutionResults::CoevolutionResults(const Config& config, int workers)
    : config_(checked(config, workers)),
      grid_(static_cast<int>(config.grid.rows), static_cast<int>(config.grid.cols)),
      partition_(partition_cells(grid_, workers)) {}

std::vector<std::string> CoevolutionResults::assignment() const {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("start: {} workers, grid {}x{}, worker grid {}x{} of {}", partition_.workers,
                              grid_.rows(), grid_.cols(), partition_.worker_rows, partition_.worker_cols,
                              partition_.blocks ? "blocks" : "strips"));
  for (int w = 0; w < partition_.workers; ++w)
    lines.push_back(fmt::format("assign: worker rank {} <- cells {}", w + 1,
                                fmt::join(partition_.cells_of[static_cast<std::size_t>(w)], ",")));
  return lines;
}

std::vector<std::string> CoevolutionResults::reassign(const std::vector<int>& members) const {
  const Partition p = partition_cells(grid_, static_cast<int>(members.size()));
  std::vector<std::string> lines;
  lines.push_back(fmt::format("reassign: {} workers, worker grid {}x{} of {}", p.workers, p.worker_rows,
                              p.worker_cols, p.blocks ? "blocks" : "strips"));
  for (std::size_t w = 0; w < members.size(); ++w)
    lines.push_back(fmt::format("assign: worker rank {} <- cells {}", members[w], fmt::join(p.cells_of[w], ",")));
  return lines;
}

RunResult CoevolutionResults::finish(std::vector<ResultMessage> results, const FinishContext& context) {
  std::vector<Ensemble> ensembles = gather_finite_ensembles(results, context, "ensembles");
  if (ensembles.empty()) throw std::runtime_error("no cell's ensemble has a finite generator: nothing to choose");
  if (config_.evaluation.grid_ensemble && ensembles.size() > 1)
    ensembles.push_back(grid_ensemble(ensembles, config_.training.population_size));

  const std::vector<CellResult> scored = score_ensembles(config_, ensembles, context.scorer);
  const std::size_t best = best_result(scored, objective_name(config_));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - context.started).count();
  write_result_files(config_, description(), config_.output_dir, ensembles[best], scored, best, seconds, context);
  context.run.event(fmt::format("finished: best ensemble {}", ensemble_label(scored[best].cell)));

  RunResult out;
  out.output_dir = config_.output_dir;
  out.best = best_label(description(), scored[best].cell);
  out.best_generators = ensembles[best].generators.size();
  out.scores = scored[best].scores;
  out.seconds = seconds;
  return out;
}

}  // namespace cellgan
