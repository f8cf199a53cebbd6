// The plan of a sweep (see sweep_plan.h).
#include "sweep/sweep_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <regex>

#include "common/error.h"
#include "common/layout_rules.h"

namespace cellgan::sweep {

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

// Why `config`'s layout cannot run a grid with `workers` workers, if it cannot.
// The layout's own rule (common/layout_rules.h).
std::optional<std::string> misfit(const Config& config, const GridSize& grid, int workers) {
  Config sized = config;
  sized.grid.rows = grid.rows;
  sized.grid.cols = grid.cols;
  const std::string why = workers_misfit(sized, workers);
  if (why.empty()) return std::nullopt;
  return fmt::format("{} worker ranks {}", workers, why);
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

void check_sweep_settings(const std::vector<std::string>& settings) {
  for (const std::string& setting : settings) {
    std::string key = setting.substr(0, setting.find('='));
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key == "grid" || key == "grid.rows" || key == "grid.cols" || key == "seed" || key == "output_dir")
      throw InputError(fmt::format("cellgan sweep: --set {}: the sweep sets {} for each run itself: expected "
                                   "--grids, --seeds (from the configuration's seed) or --out instead",
                                   setting, key));
  }
}

std::vector<PlannedRun> plan_sweep(const Config& config, const std::vector<GridSize>& grids,
                                   const std::vector<int>& workers, int seeds) {
  std::vector<PlannedRun> runs;
  for (const GridSize& g : grids)
    for (const int w : workers)
      for (int s = 0; s < seeds; ++s) {
        PlannedRun run;
        run.grid = g;
        run.workers = w;
        run.seed = config.seed + static_cast<std::uint64_t>(s);
        run.name = fmt::format("g{}-w{}-s{}", g.label(), w, run.seed);
        run.skip = misfit(config, g, w);
        runs.push_back(run);
      }
  return runs;
}

std::vector<std::string> run_settings(const PlannedRun& run, const std::string& folder) {
  // A YAML single-quoted scalar: any path, its quotes doubled.
  std::string quoted;
  for (const char c : folder) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return {fmt::format("grid.rows={}", run.grid.rows), fmt::format("grid.cols={}", run.grid.cols),
          fmt::format("seed={}", run.seed), fmt::format("output_dir='{}'", quoted)};
}

}  // namespace cellgan::sweep
