// Where a run starts (see resume_plan.h).
#include "master/resume_plan.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/error.h"
#include "common/run_files.h"
#include "common/run_records.h"
#include "master/run_directory.h"

namespace cellgan {
namespace fs = std::filesystem;
namespace {

// Throws unless `config` may go on with the run whose config.yaml `dir`
// holds; returns that run's output_dir (where it was when it last ran).
std::string check_same_run(const Config& config, const fs::path& dir) {
  const fs::path saved_path = dir / run_files::kConfig;
  std::ifstream in(saved_path);
  std::stringstream text;
  text << in.rdbuf();
  Config saved;
  try {
    saved = parse_config(text.str(), saved_path.string());
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: output_dir: cannot resume: the interrupted run's configuration does not "
                                 "parse: {}",
                                 config.source, e.what()));
  }
  for (const std::string& d : config_differences(saved, config))
    if (!may_change_on_resume(d))
      throw InputError(fmt::format("{}: cannot resume the run in '{}': {} (the run's {} in this file): only "
                                   "output_dir, runtime.*, checkpoint.*, status.*, faults and training.generations "
                                   "may change",
                                   config.source, config.output_dir, d.substr(0, d.find(':')), d.substr(d.find(':') + 2)));
  return saved.output_dir;
}

// Whether `was_at` (config.yaml's output_dir) names the folder at `now`.
bool same_folder(const std::string& was_at, const std::string& now) {
  std::error_code ec;
  return was_at == now || fs::equivalent(was_at, now, ec);
}

// Generations 1..N (N at most `up_to`) each have `per_generation` lines in
// metrics.jsonl; returns N. A line cut by an interruption is no line.
struct MetricsKept {
  std::int64_t through = 0;    // generations 1..through have every record
  std::int64_t first_bad = 0;  // the first whole line that is not a record (1-based), 0 if none
};

MetricsKept metrics_complete_through(const fs::path& path, int per_generation, std::int64_t up_to) {
  std::ifstream in(path);
  std::map<std::int64_t, int> lines;
  MetricsKept kept;
  std::int64_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (const auto record = parse_metrics_line(line)) ++lines[record->generation];
    else if (kept.first_bad == 0 && line.find_first_not_of(" \t\r") != std::string::npos && !in.eof())
      kept.first_bad = number;  // a whole line, not blank, not one cut short
  }
  while (kept.through < up_to && lines[kept.through + 1] >= per_generation) ++kept.through;
  return kept;
}

// A run goes on only with the records of every generation it resumes
// after: the checkpoint cannot give back lines missing from metrics.jsonl.
void check_metrics_kept(const Config& config, const std::string& resume, const ResumePlan& plan,
                        int per_generation) {
  const fs::path path = fs::path(config.output_dir) / run_files::kMetrics;
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  const MetricsKept read = exists ? metrics_complete_through(path, per_generation, plan.generation) : MetricsKept{};
  const std::int64_t kept = read.through;
  if (kept >= plan.generation) return;
  std::vector<std::string> unused;
  const auto covered = kept > 0 ? newest_complete_checkpoint(config.output_dir, unused, kept) : std::nullopt;
  throw InputError(fmt::format(
      "--resume {}: '{}' {}{}, but the checkpoint {} is of generation {}: the records of {} are missing; put the "
      "file back, or {}",
      resume, path.string(),
      !exists    ? std::string("is missing")
      : kept > 0 ? fmt::format("holds generations 1..{} only", kept)
                 : std::string("holds no complete generation"),
      read.first_bad > 0 ? fmt::format(" (its line {} is not a metrics record)", read.first_bad) : std::string(),
      plan.folder, plan.generation,
      kept + 1 == plan.generation ? fmt::format("generation {}", plan.generation)
                                  : fmt::format("generations {}..{}", kept + 1, plan.generation),
      covered ? fmt::format("resume from a checkpoint it covers: --resume {}", covered->folder)
              : std::string("start a new run in another output_dir")));
}

void check_checkpoint_fits(const Config& config, const ResumePlan& plan) {
  const CheckpointManifest& m = plan.manifest;
  if (m.seed != config.seed || m.rows != config.grid.rows || m.cols != config.grid.cols)
    throw InputError(fmt::format("{}: checkpoint of seed {} on a {}x{} grid, expected seed {} on {}x{} ({})",
                                 plan.folder, m.seed, m.rows, m.cols, config.seed, config.grid.rows, config.grid.cols,
                                 config.source));
  if (m.generation > config.training.generations)
    throw InputError(fmt::format("{}: training.generations: {} is below the checkpoint's generation {} ({})",
                                 config.source, config.training.generations, m.generation, plan.folder));
}

}  // namespace

ResumePlan plan_resume(const Config& config, const std::string& resume, int records_per_generation) {
  const fs::path dir(config.output_dir);
  std::error_code ec;
  const bool exists = fs::exists(dir, ec);
  const bool interrupted = exists && fs::exists(dir / run_files::kConfig, ec) && !fs::exists(dir / run_files::kResult, ec);
  ResumePlan plan;
  check_folder_free(config);
  if (resume.empty()) {
    if (interrupted)
      throw InputError(fmt::format("{}: output_dir: '{}' holds an interrupted run: continue it with the same "
                                   "command and --resume auto, or choose another output_dir",
                                   config.source, config.output_dir));
    check_run_directory(config);
    return plan;
  }
  if (exists && fs::exists(dir / run_files::kResult, ec))
    throw InputError(fmt::format("{}: --resume: '{}' holds a finished run (result.json): nothing to resume",
                                 config.source, config.output_dir));
  if (resume != "auto" && !fs::is_directory(resume, ec))
    throw InputError(fmt::format("--resume {}: no such folder: expected auto or a checkpoint folder of the run "
                                 "(checkpoints/gen-NNNNNN under '{}')",
                                 resume, config.output_dir));
  if (!interrupted) {
    if (resume != "auto")
      throw InputError(fmt::format("--resume {}: '{}' (output_dir of {}) holds no interrupted run", resume,
                                   config.output_dir, config.source));
    check_run_directory(config);
    plan.notes.push_back(fmt::format("--resume auto: no run in {} yet: starting a new one", config.output_dir));
    return plan;
  }
  const std::string was_at = check_same_run(config, dir);
  if (!same_folder(was_at, config.output_dir))
    plan.notes.push_back(fmt::format("the run's folder was at '{}' and goes on at '{}'", was_at, config.output_dir));
  plan.resuming = true;
  if (resume == "auto") {
    std::vector<std::string> skipped;
    auto point = newest_complete_checkpoint(config.output_dir, skipped);
    for (const auto& s : skipped) plan.notes.push_back("skipping checkpoint " + s);
    if (!point && !skipped.empty()) {
      plan.warnings.push_back(fmt::format("no checkpoint of the run can be resumed ({} skipped, incomplete or "
                                          "unreadable): starting again from generation 0, so the generations done "
                                          "are trained again",
                                          skipped.size()));
      return plan;
    }
    if (!point) {
      plan.notes.push_back("no complete checkpoint: starting again from generation 0");
      return plan;
    }
    plan.folder = point->folder;
    plan.manifest = std::move(point->manifest);
  } else {
    const fs::path folder = fs::weakly_canonical(fs::path(resume), ec);
    const fs::path root = fs::weakly_canonical(fs::path(checkpoints_folder(config.output_dir)), ec);
    if (folder.parent_path() != root)
      throw InputError(fmt::format("--resume {}: expected `auto` or a checkpoint folder of output_dir, {}/gen-NNNNNN",
                                   resume, checkpoints_folder(config.output_dir)));
    plan.folder = resume;
    plan.manifest = read_complete_checkpoint(resume);  // InputError: missing or corrupt
  }
  plan.generation = plan.manifest.generation;
  check_checkpoint_fits(config, plan);
  check_metrics_kept(config, resume, plan, records_per_generation);
  plan.notes.push_back(fmt::format("resuming after generation {} from {}", plan.generation, plan.folder));
  return plan;
}

}  // namespace cellgan
