// Reading a run folder back (see run_record.h).
#include "sweep/run_record.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "common/config.h"
#include "common/layout_description.h"
#include "common/run_files.h"
#include "common/run_records.h"
#include "common/run_state.h"
#include "sweep/number_text.h"

namespace cellgan::sweep {

namespace fs = std::filesystem;

namespace {

// Sums the phase seconds of the generations counted; fills the timing fields.
void add_timings(const fs::path& path, RunRecord& r) {
  std::map<std::int64_t, std::map<std::string, double>> by_generation;
  for (const GenerationRecord& record : cellgan::read_metrics(path.string())) {
    auto& phases = by_generation[record.generation];
    for (const auto& [phase, seconds] : record.seconds) phases[phase] += seconds;
  }
  if (by_generation.empty() || r.workers <= 0) return;
  const bool skip_warm_up = by_generation.size() > 1;
  std::map<std::string, double> sums;
  for (const auto& [generation, phases] : by_generation) {
    if (skip_warm_up && generation == by_generation.begin()->first) continue;
    ++r.generations_timed;
    for (const auto& [phase, seconds] : phases) sums[phase] += seconds;
  }
  // data_parallel's one record a generation is the replicas' wall time already.
  const int sharing = LayoutDescription::of_run(r.layout).timing_sharers(r.workers);
  const double per = 1.0 / (static_cast<double>(r.generations_timed) * sharing);
  for (const auto& [phase, seconds] : sums) {
    const double s = seconds * per;
    r.phase_per_generation[phase] = s;
    r.seconds_per_generation += s;
    (is_communication_phase(phase) ? r.comm_per_generation : r.compute_per_generation) += s;
  }
}

// Fills the scores and, for a run written before run.json held them, the seconds.
void add_result(const ResultRecord& result, RunRecord& r) {
  if (r.total_seconds <= 0) r.total_seconds = result.seconds;  // before run.json held it
  for (const auto& [name, value] : result.scores) {
    if (std::isnan(value))
      r.unfinite_scores.insert(name);  // a score not finite when written reads as NaN: only named
    else
      r.scores[name] = value;
  }
}

// Every scalar (or sequence, as flow YAML) under `node`, by dotted key.
void leaves(const YAML::Node& node, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& item : node)
      leaves(item.second, prefix.empty() ? item.first.Scalar() : prefix + "." + item.first.Scalar(), out);
    return;
  }
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    const std::optional<double> x = number_of(text);
    out[prefix] = x ? fmt::format("{}", *x) : text;
    return;
  }
  YAML::Emitter flow;
  flow << YAML::Flow << node;
  out[prefix] = flow.c_str();
}

std::map<std::string, std::string> settings_of(const fs::path& path) {
  std::map<std::string, std::string> out;
  try {
    leaves(YAML::LoadFile(path.string()), "", out);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(fmt::format("{}: not YAML: {}", path.string(), e.what()));
  }
  return out;
}

}  // namespace

std::string RunRecord::grid_label() const { return fmt::format("{}x{}", rows, cols); }

bool is_communication_phase(const std::string& phase) {
  return phase == "gather" || phase == "idle" || phase == "communicate";
}

std::optional<RunRecord> read_run_record(const std::string& folder) {
  const fs::path dir(folder);
  std::error_code ec;
  if (!fs::is_regular_file(dir / run_files::kConfig, ec)) return std::nullopt;
  RunRecord r;
  r.folder = folder;
  Config config;
  try {
    config = load_config((dir / run_files::kConfig).string());
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what());
  }
  r.rows = static_cast<int>(config.grid.rows);
  r.cols = static_cast<int>(config.grid.cols);
  r.seed = config.seed;
  r.generations = config.training.generations;
  r.dataset = to_string(config.data.dataset);
  r.layout = to_string(config.layout);
  r.settings = settings_of(dir / run_files::kConfig);
  // The worker count, the layout and the times from the run's own record.
  const std::optional<RunState> state = read_run_state(dir.string());
  if (state) {
    r.workers = state->workers;
    r.status = state->status;
    r.message = state->message;
    r.layout = state->layout;
    r.total_seconds = state->seconds;
    r.spans = state->spans;
  }
  add_timings(dir / run_files::kMetrics, r);
  const std::optional<ResultRecord> result = read_result(dir.string());
  r.finished = result.has_value();
  if (result) add_result(*result, r);
  return r;
}

std::vector<std::string> keep_varied_keys(std::vector<RunRecord>& records, const std::vector<std::string>& declared) {
  std::set<std::string> all;
  for (const RunRecord& r : records)
    for (const auto& [key, value] : r.settings) all.insert(key);
  std::vector<std::string> varied;
  for (const std::string& key : all) {
    if (std::find(declared.begin(), declared.end(), key) != declared.end()) {
      varied.push_back(key);
      continue;
    }
    const auto under = [&key](const char* section) { return key.rfind(section, 0) == 0; };
    if (key == "grid.rows" || key == "grid.cols" || key == "seed" || key == "output_dir" || key == "layout" ||
        key == "faults" || key == "data.path" || under("runtime.") || under("status.") || under("checkpoint."))
      continue;
    std::set<std::string> seen;
    for (const RunRecord& r : records) seen.insert(r.settings.count(key) ? r.settings.at(key) : "");
    if (seen.size() > 1) varied.push_back(key);
  }
  for (RunRecord& r : records) {
    r.values.clear();
    for (const std::string& key : varied) r.values[key] = r.settings.count(key) ? r.settings.at(key) : "";
  }
  return varied;
}

std::vector<std::string> find_run_folders(const std::string& root, int depth) {
  std::vector<std::string> found;
  std::error_code ec;
  if (fs::is_regular_file(fs::path(root) / run_files::kConfig, ec)) found.push_back(root);
  if (depth <= 0 || !fs::is_directory(root, ec)) return found;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    if (!entry.is_directory(ec) || entry.path().filename() == run_files::kCheckpoints) continue;
    for (std::string& f : find_run_folders(entry.path().string(), depth - 1)) found.push_back(std::move(f));
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace cellgan::sweep
