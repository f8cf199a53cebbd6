// The curves of a run (see run_history.h).
#include "master/run_history.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <vector>

#include "common/run_records.h"

namespace cellgan {
namespace {

using nlohmann::json;

struct Point {
  std::optional<double> objective, generator_loss, discriminator_loss, generator_lr, discriminator_lr;
};

std::optional<double> finite(double value) { return std::isfinite(value) ? std::optional<double>(value) : std::nullopt; }

std::optional<double> mean_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum = 0.0;
  for (const double v : values) {
    if (!std::isfinite(v)) return std::nullopt;
    sum += v;
  }
  return sum / static_cast<double>(values.size());
}

json value(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The master appends a generation's lines together; a reader may still
// catch it half written. A last generation with fewer records than the
// one before is left out until it is whole.
void drop_incomplete_last_generation(std::map<int, std::map<std::int64_t, Point>>& cells) {
  std::map<std::int64_t, std::size_t> records;  // generation -> records
  for (const auto& [cell, points] : cells)
    for (const auto& [generation, point] : points) ++records[generation];
  if (records.size() < 2) return;
  const auto last = std::prev(records.end());
  if (last->second >= std::prev(last)->second) return;
  for (auto& [cell, points] : cells) points.erase(last->first);
  for (auto it = cells.begin(); it != cells.end();) it = it->second.empty() ? cells.erase(it) : std::next(it);
}

}  // namespace

std::string run_history_json(const std::string& metrics_path, const std::string& objective_given,
                             std::vector<std::string>* unreadable) {
  std::string objective = objective_given;
  std::map<int, std::map<std::int64_t, Point>> cells;  // cell -> generation -> point
  for (const GenerationRecord& r : read_metrics(metrics_path, unreadable)) {
    if (objective.empty()) objective = r.scores.count("mode_tvd") ? "mode_tvd" : "fid";
    Point p;
    if (const auto it = r.scores.find(objective); it != r.scores.end()) p.objective = finite(it->second);
    p.generator_loss = finite(r.generator_loss);
    p.discriminator_loss = finite(r.discriminator_loss);
    p.generator_lr = mean_of(r.generator_lrs);
    p.discriminator_lr = mean_of(r.discriminator_lrs);
    cells[r.cell][r.generation] = p;
  }
  if (objective.empty()) objective = "fid";
  drop_incomplete_last_generation(cells);

  json out = {{"objective", objective}, {"cells", json::array()}};
  std::map<std::int64_t, std::vector<double>> by_generation;
  for (const auto& [cell, points] : cells) {
    json c = {{"cell", cell}};
    for (const char* key :
         {"generation", "objective", "generator_loss", "discriminator_loss", "generator_lr", "discriminator_lr"})
      c[key] = json::array();
    for (const auto& [generation, p] : points) {
      c["generation"].push_back(generation);
      c["objective"].push_back(value(p.objective));
      c["generator_loss"].push_back(value(p.generator_loss));
      c["discriminator_loss"].push_back(value(p.discriminator_loss));
      c["generator_lr"].push_back(value(p.generator_lr));
      c["discriminator_lr"].push_back(value(p.discriminator_lr));
      if (p.objective) by_generation[generation].push_back(*p.objective);
    }
    out["cells"].push_back(std::move(c));
  }
  json grid = {{"generation", json::array()}, {"best", json::array()}, {"mean", json::array()}};
  for (const auto& [generation, values] : by_generation) {
    grid["generation"].push_back(generation);
    grid["best"].push_back(*std::min_element(values.begin(), values.end()));
    grid["mean"].push_back(std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size()));
  }
  out["grid"] = std::move(grid);
  return out.dump();
}

}  // namespace cellgan
