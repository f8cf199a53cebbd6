// The plan of a sweep (see sweep_plan.h).
#include "sweep/sweep_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <utility>

#include "common/config.h"
#include "common/error.h"
#include "common/layout_rules.h"
#include "common/run_files.h"
#include "sweep/number_text.h"

namespace cellgan::sweep {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxSide = 64;
constexpr int kMaxWorkers = 1024;

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (const char c : text + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    items.push_back(item);
    item.clear();
  }
  return items;
}

constexpr int kMaxValues = 100;

std::string trimmed(std::string text) {
  text.erase(0, text.find_first_not_of(" \t"));
  text.erase(text.find_last_not_of(" \t") + 1);
  return text;
}

bool set_by_sweep(const std::string& key) {
  return key == "grid" || key == "grid.rows" || key == "grid.cols" || key == "seed" || key == "output_dir";
}

// "-batch_size64": a varied key's last part and its value, for a folder name.
std::string name_part(const std::string& key, const std::string& value) {
  std::string part = "-" + key.substr(key.rfind('.') + 1) + value;
  for (std::size_t i = 1; i < part.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(part[i])) && part[i] != '.' && part[i] != '_') part[i] = '_';
  return part;
}

// Every combination of the varied values, the last key changing fastest.
std::vector<std::vector<std::pair<std::string, std::string>>> combinations(const std::vector<Variation>& varies) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out{{}};
  for (const Variation& v : varies) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& before : out)
      for (const std::string& value : v.values) {
        next.push_back(before);
        next.back().emplace_back(v.key, value);
      }
    out = std::move(next);
  }
  return out;
}

// The settings of a run without its output_dir.
std::vector<std::string> own_settings(const PlannedRun& run) {
  std::vector<std::string> s = run_settings(run, "");
  s.pop_back();
  return s;
}

// Why the run cannot be run, if it cannot: the configuration's checks of
// its settings, then the layout's worker rule (common/layout_rules.h).
std::optional<std::string> misfit(const Config& base, const PlannedRun& run, const ConfigLoader& load,
                                  bool& by_config) {
  Config config = base;
  by_config = false;
  if (load) {
    try {
      config = load(own_settings(run));
    } catch (const InputError& e) {
      by_config = true;
      return std::string(e.what());
    }
  } else {
    config.grid.rows = run.grid.rows;
    config.grid.cols = run.grid.cols;
  }
  const std::string why = workers_misfit(config, run.workers);
  if (why.empty()) return std::nullopt;
  return fmt::format("{} worker ranks {}", run.workers, why);
}

// The natural worker count of `grid` for the base configuration's layout.
int natural_workers(const Config& config, const GridSize& grid) {
  Config sized = config;
  sized.grid.rows = grid.rows;
  sized.grid.cols = grid.cols;
  const int natural = worker_range(sized).natural;
  if (natural <= 0)
    throw InputError(fmt::format("cellgan sweep: --workers is required for layout {}: it has no natural worker "
                                 "count (e.g. --workers 1,2)",
                                 to_string(config.layout)));
  return natural;
}

// InputError when a --vary value is refused by the configuration in every
// run that has it: a value no combination can use (unless every run is
// refused, which the caller reports).
void refuse_values_refused_everywhere(const std::vector<PlannedRun>& runs, const std::vector<Variation>& varies) {
  // Every run refused: the caller says so for the whole sweep.
  if (std::all_of(runs.begin(), runs.end(), [](const PlannedRun& r) { return r.skip.has_value(); })) return;
  for (const Variation& v : varies)
    for (const std::string& value : v.values) {
      const PlannedRun* refused = nullptr;
      bool all = true;
      for (const PlannedRun& run : runs) {
        if (std::find(run.varied.begin(), run.varied.end(), std::pair{v.key, value}) == run.varied.end()) continue;
        if (!run.refused_by_config) {
          all = false;
          break;
        }
        refused = &run;
      }
      if (all && refused)
        throw InputError(fmt::format("cellgan sweep: --vary {}={}: refused in every run: {}", v.key, value,
                                     *refused->skip));
    }
}

}  // namespace

std::string GridSize::label() const { return fmt::format("{}x{}", rows, cols); }

std::vector<GridSize> parse_grids(const std::string& text) {
  static const std::regex kGrid("([0-9]{1,3})x([0-9]{1,3})");
  std::vector<GridSize> grids;
  for (const std::string& item : split_commas(text)) {
    std::smatch m;
    if (!std::regex_match(item, m, kGrid))
      throw InputError(fmt::format("cellgan sweep: --grids: '{}' is not a grid size: expected ROWSxCOLS, e.g. "
                                   "--grids 1x1,2x2,3x3",
                                   item));
    const GridSize g{std::stoi(m[1]), std::stoi(m[2])};
    if (g.rows < 1 || g.cols < 1 || g.rows > kMaxSide || g.cols > kMaxSide)
      throw InputError(fmt::format("cellgan sweep: --grids: '{}' is out of range: expected 1..{} rows and columns",
                                   item, kMaxSide));
    if (std::any_of(grids.begin(), grids.end(), [&](const GridSize& o) { return o.rows == g.rows && o.cols == g.cols; }))
      throw InputError(fmt::format("cellgan sweep: --grids: '{}' is given twice", item));
    grids.push_back(g);
  }
  return grids;
}

std::vector<int> parse_workers(const std::string& text) {
  static const std::regex kCount("[0-9]{1,5}");
  std::vector<int> counts;
  for (const std::string& item : split_commas(text)) {
    if (!std::regex_match(item, kCount) || std::stoi(item) < 1 || std::stoi(item) > kMaxWorkers)
      throw InputError(fmt::format("cellgan sweep: --workers: '{}' is not a worker count: expected integers "
                                   "1..{} separated by commas, e.g. --workers 1,2",
                                   item, kMaxWorkers));
    const int w = std::stoi(item);
    if (std::find(counts.begin(), counts.end(), w) != counts.end())
      throw InputError(fmt::format("cellgan sweep: --workers: '{}' is given twice", item));
    counts.push_back(w);
  }
  return counts;
}

Variation parse_vary(const std::string& text) {
  const std::size_t eq = text.find('=');
  Variation v;
  v.key = trimmed(text.substr(0, eq));
  if (eq == std::string::npos || v.key.empty())
    throw InputError(fmt::format("cellgan sweep: --vary '{}': expected KEY=V1,V2,..., e.g. --vary "
                                 "training.batch_size=32,64,128",
                                 text));
  for (const std::string& item : split_commas(text.substr(eq + 1))) {
    const std::string value = trimmed(item);
    if (value.empty())
      throw InputError(fmt::format("cellgan sweep: --vary {}: an empty value: expected values separated by commas",
                                   text));
    for (const std::string& other : v.values)
      if (other == value || (number_of(other) && number_of(value) && *number_of(other) == *number_of(value)))
        throw InputError(fmt::format("cellgan sweep: --vary {}: '{}' is given twice{}", text, value,
                                     other == value ? "" : fmt::format(" ('{}' is the same number)", other)));
    v.values.push_back(value);
  }
  if (v.values.size() > static_cast<std::size_t>(kMaxValues))
    throw InputError(fmt::format("cellgan sweep: --vary {}: {} values: expected at most {}", v.key, v.values.size(),
                                 kMaxValues));
  return v;
}

void check_sweep_settings(const std::vector<std::string>& settings, const std::vector<Variation>& varies) {
  std::vector<std::string> set_keys;
  for (const std::string& setting : settings) {
    const std::string key = trimmed(setting.substr(0, setting.find('=')));
    if (set_by_sweep(key))
      throw InputError(fmt::format("cellgan sweep: --set {}: the sweep sets {} for each run itself: expected "
                                   "--grids, --seeds (from the configuration's seed) or --out instead",
                                   setting, key));
    set_keys.push_back(key);
  }
  std::vector<std::string> varied;
  for (const Variation& v : varies) {
    if (set_by_sweep(v.key))
      throw InputError(fmt::format("cellgan sweep: --vary {}: the sweep sets {} for each run itself: expected "
                                   "--grids, --seeds or --out instead",
                                   v.key, v.key));
    if (std::find(set_keys.begin(), set_keys.end(), v.key) != set_keys.end())
      throw InputError(fmt::format("cellgan sweep: --vary {}: also given with --set: expected one of the two", v.key));
    if (std::find(varied.begin(), varied.end(), v.key) != varied.end())
      throw InputError(fmt::format("cellgan sweep: --vary {}: given twice: expected one --vary per key", v.key));
    varied.push_back(v.key);
  }
}

std::vector<PlannedRun> plan_sweep(const Config& config, const std::vector<GridSize>& grids_given,
                                   const std::vector<int>& workers, int seeds, const std::vector<Variation>& varies,
                                   const ConfigLoader& load) {
  const std::vector<GridSize> grids =
      grids_given.empty() ? std::vector<GridSize>{{static_cast<int>(config.grid.rows), static_cast<int>(config.grid.cols)}}
                          : grids_given;
  std::vector<PlannedRun> runs;
  for (const GridSize& g : grids) {
    const std::vector<int> counts = workers.empty() ? std::vector<int>{natural_workers(config, g)} : workers;
    for (const int w : counts)
      for (int s = 0; s < seeds; ++s)
        for (const auto& varied : combinations(varies)) {
          PlannedRun run;
          run.grid = g;
          run.workers = w;
          run.seed = config.seed + static_cast<std::uint64_t>(s);
          run.varied = varied;
          run.name = fmt::format("g{}-w{}-s{}", g.label(), w, run.seed);
          for (const auto& [key, value] : varied) run.name += name_part(key, value);
          for (const PlannedRun& other : runs)
            if (other.name == run.name)
              throw InputError(fmt::format("cellgan sweep: --vary: two runs would share the folder name {}: expected "
                                           "values that differ in letters, digits, '.' or '_'",
                                           run.name));
          run.skip = misfit(config, run, load, run.refused_by_config);
          runs.push_back(run);
        }
  }
  refuse_values_refused_everywhere(runs, varies);
  return runs;
}

std::optional<std::string> made_otherwise(const PlannedRun& run, const std::string& folder, const ConfigLoader& load) {
  const fs::path saved_path = fs::path(folder) / run_files::kConfig;
  std::error_code ec;
  if (!fs::is_regular_file(saved_path, ec)) return std::nullopt;
  Config saved;
  try {
    saved = load_config(saved_path.string());
  } catch (const InputError& e) {
    return fmt::format("its {} does not load: {}", run_files::kConfig, e.what());
  }
  const bool finished = fs::exists(fs::path(folder) / run_files::kResult, ec);
  const Config planned = load(own_settings(run));
  for (const std::string& d : config_differences(saved, planned)) {
    // What a resume may change, but not a finished run's generations.
    if (may_change_on_resume(d) && !(finished && d.rfind("training.generations:", 0) == 0)) continue;
    const std::size_t colon = d.find(": "), vs = d.find(" vs ");
    if (colon == std::string::npos || vs == std::string::npos) return d;
    return fmt::format("{}: {} in the run, {} in this sweep", d.substr(0, colon), d.substr(colon + 2, vs - colon - 2),
                       d.substr(vs + 4));
  }
  return std::nullopt;
}

std::vector<std::string> run_settings(const PlannedRun& run, const std::string& folder) {
  // A YAML single-quoted scalar: any path, its quotes doubled.
  std::string quoted;
  for (const char c : folder) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  std::vector<std::string> out = {fmt::format("grid.rows={}", run.grid.rows), fmt::format("grid.cols={}", run.grid.cols),
                                  fmt::format("seed={}", run.seed)};
  for (const auto& [key, value] : run.varied) out.push_back(key + "=" + value);
  out.push_back(fmt::format("output_dir='{}'", quoted));
  return out;
}

}  // namespace cellgan::sweep
