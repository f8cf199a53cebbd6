// The curves of a run (see run_history.h).
#include "master/run_history.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <vector>

#include "common/error.h"

namespace cellgan {
namespace {

using nlohmann::json;

struct Point {
  std::optional<double> objective, generator_loss, discriminator_loss, generator_lr, discriminator_lr;
};

std::optional<double> finite(const json& value) {
  if (!value.is_number()) return std::nullopt;
  const double v = value.get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<double> mean_of(const json& values) {
  if (!values.is_array() || values.empty()) return std::nullopt;
  double sum = 0.0;
  for (const json& v : values) {
    const auto x = finite(v);
    if (!x) return std::nullopt;
    sum += *x;
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

std::string run_history_json(const std::string& metrics_path, const std::string& objective_given) {
  std::string objective = objective_given;
  std::map<int, std::map<std::int64_t, Point>> cells;  // cell -> generation -> point
  std::ifstream in(metrics_path);
  std::string line;
  for (int number = 1; in && std::getline(in, line); ++number) {
    if (in.eof()) break;  // no newline after it: still being written
    if (line.empty()) continue;
    try {
      const json r = json::parse(line);
      const json& scores = r.at("scores");
      if (objective.empty()) objective = scores.contains("mode_tvd") ? "mode_tvd" : "fid";
      Point p;
      if (scores.contains(objective)) p.objective = finite(scores.at(objective));
      p.generator_loss = finite(r.at("generator_loss"));
      p.discriminator_loss = finite(r.at("discriminator_loss"));
      p.generator_lr = mean_of(r.at("generator_lrs"));
      p.discriminator_lr = mean_of(r.at("discriminator_lrs"));
      cells[r.at("cell").get<int>()][r.at("generation").get<std::int64_t>()] = p;
    } catch (const json::exception& e) {
      throw InputError(fmt::format("{}:{}: not a metrics record: {}", metrics_path, number, e.what()));
    }
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
