// A run's status as JSON and Prometheus text (see status_render.h).
#include "master/status_render.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/layout_description.h"

namespace cellgan {
namespace {

using nlohmann::json;

json number_or_null(const std::optional<double>& v) {
  if (v && std::isfinite(*v)) return *v;
  return nullptr;
}

// A label value with \, " and newlines escaped, as the format requires.
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// A sample value: the shortest text that reads back to the same double.
std::string value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

// Writes a metric family: its HELP and TYPE lines, then its samples.
class Family {
 public:
  Family(std::string& out, const char* name, const char* type, const char* help) : out_(out), name_(name) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  Family& sample(double v, const std::string& labels = "") {
    out_ += labels.empty() ? fmt::format("{} {}\n", name_, value(v))
                           : fmt::format("{}{{{}}} {}\n", name_, labels, value(v));
    return *this;
  }

 private:
  std::string& out_;
  const char* name_;
};

}  // namespace

std::string status_json(const StatusSnapshot& s) {
  json j;
  j["phase"] = s.phase;
  j["detail"] = s.detail;
  j["grid"] = {{"rows", s.rows}, {"cols", s.cols}};
  j["layout"] = s.layout;
  const LayoutDescription layout = LayoutDescription::of_run(s.layout);
  j["unit"] = layout.unit();              // what a grid position holds: "cell" or "class"
  j["curve_unit"] = layout.curve_unit();  // what a curve's line is: the unit, or "replicas"
  j["objective"] = s.objective;
  j["generations"] = {{"total", s.generations_total}, {"done", s.generations_done}};
  j["elapsed_seconds"] = s.elapsed_seconds;
  j["eta_seconds"] = number_or_null(s.eta_seconds);
  j["best"] = s.best_cell ? json{{"cell", *s.best_cell}, {"score", number_or_null(s.best_score)}} : json(nullptr);
  j["cells"] = json::array();
  for (const CellStatus& c : s.cells)
    j["cells"].push_back({{"cell", c.cell},
                          {"row", c.row},
                          {"col", c.col},
                          {"generation", c.generation},
                          {"score", number_or_null(c.score)},
                          {"worker", c.worker},
                          {"state", c.state}});
  j["workers"] = json::array();
  for (const WorkerStatus& w : s.workers)
    j["workers"].push_back({{"rank", w.rank},
                            {"state", w.state},
                            {"generation", w.generation},
                            {"heartbeat_age_seconds", w.heartbeat_age_seconds}});
  j["events"] = json::array();
  for (const StatusEvent& e : s.events) j["events"].push_back({{"seconds", e.seconds}, {"line", e.line}});
  j["events_total"] = s.events_total;
  j["preview"] = s.preview_generation && !s.preview_path.empty()
                     ? json{{"generation", *s.preview_generation},
                            {"cell", s.preview_cell ? json(*s.preview_cell) : json(nullptr)},
                            {"url", "/preview.png"}}
                     : json(nullptr);
  // Lines from workers may hold any bytes: replace what is not UTF-8 rather than throw.
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string status_metrics(const StatusSnapshot& s) {
  std::string out;
  Family(out, "cellgan_phase", "gauge", "1 for the run's phase (starting, training, scoring, finished, failed).")
      .sample(1, fmt::format("phase=\"{}\"", label(s.phase)));
  Family(out, "cellgan_grid_rows", "gauge", "Rows of the grid of cells.").sample(s.rows);
  Family(out, "cellgan_grid_cols", "gauge", "Columns of the grid of cells.").sample(s.cols);
  Family(out, "cellgan_generations_planned", "gauge", "Generations the run trains.")
      .sample(static_cast<double>(s.generations_total));
  Family(out, "cellgan_generations_done", "gauge", "Generations complete on every cell.")
      .sample(static_cast<double>(s.generations_done));
  Family(out, "cellgan_elapsed_seconds", "gauge", "Seconds since the master started.").sample(s.elapsed_seconds);
  if (s.eta_seconds)
    Family(out, "cellgan_eta_seconds", "gauge", "Seconds the remaining generations should take, at the pace so far.")
        .sample(*s.eta_seconds);
  const std::string objective = fmt::format("objective=\"{}\"", label(s.objective));
  if (s.best_cell && s.best_score)
    Family(out, "cellgan_best_score", "gauge", "The lowest mixture score of the last complete generation.")
        .sample(*s.best_score, fmt::format("cell=\"{}\",{}", *s.best_cell, objective));

  Family generation(out, "cellgan_cell_generation", "gauge", "Generations a cell has completed.");
  for (const CellStatus& c : s.cells)
    generation.sample(static_cast<double>(c.generation), fmt::format("cell=\"{}\",worker=\"{}\"", c.cell, c.worker));
  Family score(out, "cellgan_cell_score", "gauge", "A cell's latest mixture score (lower is better).");
  for (const CellStatus& c : s.cells)
    if (c.score) score.sample(*c.score, fmt::format("cell=\"{}\",worker=\"{}\",{}", c.cell, c.worker, objective));

  Family state(out, "cellgan_worker_state", "gauge", "1 for each worker's current state.");
  for (const WorkerStatus& w : s.workers) state.sample(1, fmt::format("worker=\"{}\",state=\"{}\"", w.rank, label(w.state)));
  Family worker_generation(out, "cellgan_worker_generation", "gauge", "The last generation a worker reported.");
  for (const WorkerStatus& w : s.workers)
    worker_generation.sample(static_cast<double>(w.generation), fmt::format("worker=\"{}\"", w.rank));
  Family age(out, "cellgan_worker_heartbeat_age_seconds", "gauge", "Seconds since the master last heard from a worker.");
  for (const WorkerStatus& w : s.workers) age.sample(w.heartbeat_age_seconds, fmt::format("worker=\"{}\"", w.rank));

  Family(out, "cellgan_events_total", "counter", "Lines written to events.log (faults, liveness, start, end).")
      .sample(static_cast<double>(s.events_total));
  return out;
}

}  // namespace cellgan
