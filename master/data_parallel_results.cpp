// The data-parallel layout, master half (see data_parallel_results.h).
#include "master/data_parallel_results.h"

#include <chrono>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/image_files.h"
#include "common/log.h"
#include "common/nn/ensemble.h"
#include "common/nn/scores.h"
#include "common/run_files.h"
#include "master/final_ensemble.h"
#include "master/run_directory.h"

namespace cellgan {
namespace {

const Config& checked(const Config& config, int workers) {
  if (config.data_parallel.scaling == BatchScaling::kStrong && config.training.batch_size < workers)
    throw InputError(fmt::format("{}: training.batch_size: {} rows cannot be split over {} workers (data_parallel."
                                 "scaling strong): expected at least {}",
                                 config.source, config.training.batch_size, workers, workers));
  return config;
}

std::string options_line(const char* what, const Config& c, int workers) {
  const DataParallelConfig& p = c.data_parallel;
  const std::int64_t global = p.scaling == BatchScaling::kWeak ? c.training.batch_size * workers : c.training.batch_size;
  return fmt::format("{}: data_parallel, {} replicas, global batch {} ({} scaling) x {} accumulated, allreduce {}, "
                     "fusion {} bytes, compression {}, clip_grad_norm {}",
                     what, workers, global, to_string(p.scaling), p.accumulate_steps, to_string(p.allreduce),
                     p.fusion_bytes, to_string(p.compression), p.clip_grad_norm);
}

}  // namespace

DataParallelResults::DataParallelResults(const Config& config, int workers)
    : config_(checked(config, workers)), workers_(workers) {}

std::vector<std::string> DataParallelResults::assignment() const {
  std::vector<std::string> lines{options_line("start", config_, workers_)};
  for (int w = 0; w < workers_; ++w)
    lines.push_back(fmt::format("assign: worker rank {} <- replica {} (shard {} of each global batch)", w + 1, w + 1,
                                w + 1));
  return lines;
}

std::vector<std::string> DataParallelResults::reassign(const std::vector<int>& members) const {
  checked(config_, static_cast<int>(members.size()));
  std::vector<std::string> lines{options_line("reassign", config_, static_cast<int>(members.size()))};
  for (std::size_t w = 0; w < members.size(); ++w)
    lines.push_back(fmt::format("assign: worker rank {} <- replica {} (shard {} of each global batch)", members[w],
                                w + 1, w + 1));
  return lines;
}

RunResult DataParallelResults::finish(std::vector<ResultMessage> results, const FinishContext& context) {
  // Worker 1 alone sends the replica's generator (DataParallelLayout::results).
  std::vector<Ensemble> ensembles = gather_finite_ensembles(results, context, "replica generator");
  if (ensembles.empty())
    throw std::runtime_error("the replica's generator is missing or has non-finite weights: nothing to write");

  const std::vector<CellResult> scored = score_ensembles(config_, ensembles, context.scorer);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - context.started).count();
  const DataParallelConfig& p = config_.data_parallel;
  const nlohmann::json layout = {{"layout", to_string(config_.layout)},
                                 {"workers", results.size()},
                                 {"batch_size", config_.training.batch_size},
                                 {"allreduce", to_string(p.allreduce)},
                                 {"fusion_bytes", p.fusion_bytes},
                                 {"compression", to_string(p.compression)},
                                 {"accumulate_steps", p.accumulate_steps},
                                 {"clip_grad_norm", p.clip_grad_norm},
                                 {"scaling", to_string(p.scaling)},
                                 {"hierarchy", to_string(p.hierarchy)},
                                 {"shard_optimizer", p.shard_optimizer}};
  write_file_atomic((std::filesystem::path(config_.output_dir) / run_files::kLayoutRecord).string(), layout.dump(2) + "\n");
  write_result_files(config_, description(), config_.output_dir, ensembles.front(), scored, 0, seconds, context);
  context.run.event("finished: the replica's generator written");

  RunResult out;
  out.output_dir = config_.output_dir;
  out.best = best_label(description(), scored.front().cell);
  out.best_generators = 1;
  out.scores = scored.front().scores;
  out.seconds = seconds;
  return out;
}

}  // namespace cellgan
