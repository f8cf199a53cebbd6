// The table of a sweep (see sweep_table.h).
#include "sweep/sweep_table.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace cellgan::sweep {

namespace {

std::string number(double x, int digits = 4) { return fmt::format("{:.{}f}", x, digits); }
std::string maybe(const std::optional<double>& x, int digits = 3) { return x ? number(*x, digits) : ""; }

}  // namespace

std::vector<SweepRow> sweep_rows(const std::vector<RunRecord>& runs) {
  std::vector<SweepRow> rows;
  // The W = 1 time of each (grid, seed).
  std::map<std::tuple<int, int, std::uint64_t>, double> serial;
  for (const RunRecord& r : runs)
    if (r.finished && r.workers == 1 && r.seconds_per_generation > 0)
      serial[{r.rows, r.cols, r.seed}] = r.seconds_per_generation;
  for (const RunRecord& r : runs) {
    if (!r.finished) continue;
    SweepRow row;
    row.run = r;
    const auto it = serial.find({r.rows, r.cols, r.seed});
    if (it != serial.end() && r.seconds_per_generation > 0 && r.workers > 0) {
      row.speedup = it->second / r.seconds_per_generation;
      row.efficiency = *row.speedup / r.workers;
    }
    const double busy = r.compute_per_generation + r.comm_per_generation;
    row.comm_share = busy > 0 ? r.comm_per_generation / busy : 0.0;
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end(), [](const SweepRow& a, const SweepRow& b) {
    return std::make_tuple(a.run.rows * a.run.cols, a.run.rows, a.run.workers, a.run.seed, a.run.folder) <
           std::make_tuple(b.run.rows * b.run.cols, b.run.rows, b.run.workers, b.run.seed, b.run.folder);
  });
  return rows;
}

std::vector<std::string> score_names(const std::vector<SweepRow>& rows) {
  std::set<std::string> names;
  for (const SweepRow& row : rows)
    for (const auto& [name, value] : row.run.scores) names.insert(name);
  return {names.begin(), names.end()};
}

std::string main_score(const std::vector<SweepRow>& rows) {
  const std::vector<std::string> names = score_names(rows);
  const bool toy = std::any_of(rows.begin(), rows.end(),
                               [](const SweepRow& r) { return r.run.dataset == "ring" || r.run.dataset == "grid"; });
  for (const char* preferred : {toy ? "modes_covered" : "fid", toy ? "high_quality" : "tvd", "fid"})
    if (std::find(names.begin(), names.end(), preferred) != names.end()) return preferred;
  return names.empty() ? "" : names.front();
}

std::string csv_text(const std::vector<SweepRow>& rows) {
  const std::vector<std::string> scores = score_names(rows);
  std::string out =
      "grid,rows,cols,cells,workers,seed,generations,s_per_generation,total_s,speedup,efficiency,compute_s,comm_s,"
      "comm_share";
  for (const std::string& name : scores) out += "," + name;
  out += "\n";
  for (const SweepRow& row : rows) {
    const RunRecord& r = row.run;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}", r.grid_label(), r.rows, r.cols, r.rows * r.cols,
                       r.workers, r.seed, r.generations, number(r.seconds_per_generation), number(r.total_seconds, 2),
                       maybe(row.speedup), maybe(row.efficiency), number(r.compute_per_generation),
                       number(r.comm_per_generation), number(row.comm_share, 4));
    for (const std::string& name : scores) {
      const auto it = r.scores.find(name);
      out += "," + (it == r.scores.end() ? std::string() : number(it->second, 4));
    }
    out += "\n";
  }
  return out;
}

std::string markdown_text(const std::vector<SweepRow>& rows, const SweepNotes& notes) {
  const std::string score = main_score(rows);
  std::string out = "# Grid-size sweep\n\n";
  out += fmt::format("{}\n\n", notes.title);
  out += fmt::format("{} finished run{}", rows.size(), rows.size() == 1 ? "" : "s");
  if (!notes.unfinished.empty()) out += fmt::format(", {} unfinished", notes.unfinished.size());
  if (!notes.failed.empty()) out += fmt::format(", {} failed", notes.failed.size());
  if (!notes.skipped.empty()) out += fmt::format(", {} skipped", notes.skipped.size());
  out += ". Times are wall seconds per generation on a worker, generation 1 (warm-up) left out; speed-up and "
         "efficiency are against W = 1 of the same grid and seed; communication is the gather and idle phases. "
         "All rows are in sweep.csv.\n\n";
  out += fmt::format("| grid | W | seed | s / generation | speed-up | efficiency | communication | {} |\n",
                     score.empty() ? "score" : score);
  out += "|---|---|---|---|---|---|---|---|\n";
  for (const SweepRow& row : rows) {
    const RunRecord& r = row.run;
    const auto it = r.scores.find(score);
    out += fmt::format("| {} | {} | {} | {:.3f} | {} | {} | {:.1f} % | {} |\n", r.grid_label(), r.workers, r.seed,
                       r.seconds_per_generation, row.speedup ? fmt::format("{:.2f}", *row.speedup) : "–",
                       row.efficiency ? fmt::format("{:.2f}", *row.efficiency) : "–", 100.0 * row.comm_share,
                       it == r.scores.end() ? "–" : fmt::format("{:.4f}", it->second));
  }
  const auto list = [&out](const char* heading, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    out += fmt::format("\n{}:\n\n", heading);
    for (const std::string& line : lines) out += "- " + line + "\n";
  };
  list("Failed", notes.failed);
  list("Unfinished (run the sweep again to resume them)", notes.unfinished);
  list("Skipped", notes.skipped);
  if (!notes.plots.empty()) out += "\n## Plots\n";
  for (const auto& [file, caption] : notes.plots) out += fmt::format("\n{}\n\n![{}]({})\n", caption, caption, file);
  return out;
}

}  // namespace cellgan::sweep
