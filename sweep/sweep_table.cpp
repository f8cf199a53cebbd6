// The table of a sweep (see sweep_table.h).
#include "sweep/sweep_table.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "sweep/number_text.h"

namespace cellgan::sweep {

namespace {

std::string number(double x, int digits = 4) { return fmt::format("{:.{}f}", x, digits); }
std::string maybe(const std::optional<double>& x, int digits = 3) { return x ? number(*x, digits) : ""; }
std::string fs_name(const std::string& folder) { return std::filesystem::path(folder).filename().string(); }
// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

namespace {

// The runs whose speed-ups compare: same layout, grid, seed and varied values.
std::string group_of(const RunRecord& r) {
  std::string key = fmt::format("{} {}x{} {}", r.layout, r.rows, r.cols, r.seed);
  for (const auto& [name, value] : r.values) key += " " + name + "=" + value;
  return key;
}

// Varied values in table order: numbers by value (8 before 16 before 100),
// then other text.
std::vector<std::tuple<bool, double, std::string>> value_order(const std::map<std::string, std::string>& values) {
  std::vector<std::tuple<bool, double, std::string>> out;
  for (const auto& [key, text] : values) {
    const std::optional<double> x = number_of(text);
    out.emplace_back(!x, x.value_or(0.0), text);
  }
  return out;
}

bool overlap(const RunRecord& a, const RunRecord& b) {
  for (const auto& [a0, a1] : a.spans)
    for (const auto& [b0, b1] : b.spans)
      if (a0 < b1 && b0 < a1) return true;
  return false;
}

}  // namespace

std::vector<SweepRow> sweep_rows(const std::vector<RunRecord>& runs) {
  std::vector<SweepRow> rows;
  std::map<std::string, double> serial;  // the W = 1 time of each group
  for (const RunRecord& r : runs)
    if (r.finished && r.workers == 1 && r.seconds_per_generation > 0) serial[group_of(r)] = r.seconds_per_generation;
  for (const RunRecord& r : runs) {
    if (!r.finished) continue;
    SweepRow row;
    row.run = r;
    const auto it = serial.find(group_of(r));
    if (it != serial.end() && r.seconds_per_generation > 0 && r.workers > 0) {
      row.speedup = it->second / r.seconds_per_generation;
      row.efficiency = *row.speedup / r.workers;
    }
    const double busy = r.compute_per_generation + r.comm_per_generation;
    row.comm_share = busy > 0 ? r.comm_per_generation / busy : 0.0;
    for (const RunRecord& other : runs)
      if (&other != &r && overlap(r, other)) row.overlapped.push_back(fs_name(other.folder));
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end(), [](const SweepRow& a, const SweepRow& b) {
    return std::make_tuple(a.run.rows * a.run.cols, a.run.rows, a.run.workers, a.run.seed, value_order(a.run.values),
                           a.run.folder) <
           std::make_tuple(b.run.rows * b.run.cols, b.run.rows, b.run.workers, b.run.seed, value_order(b.run.values),
                           b.run.folder);
  });
  return rows;
}

std::vector<std::string> varied_keys(const std::vector<SweepRow>& rows) {
  std::set<std::string> keys;
  for (const SweepRow& row : rows)
    for (const auto& [key, value] : row.run.values) keys.insert(key);
  return {keys.begin(), keys.end()};
}

std::vector<std::string> score_names(const std::vector<SweepRow>& rows) {
  std::set<std::string> names;
  for (const SweepRow& row : rows)
    for (const auto& [name, value] : row.run.scores) names.insert(name);
  return {names.begin(), names.end()};
}

namespace {

// score_names() and the scores some run wrote as not finite.
std::vector<std::string> csv_score_names(const std::vector<SweepRow>& rows) {
  const std::vector<std::string> finite = score_names(rows);
  std::set<std::string> names(finite.begin(), finite.end());
  for (const SweepRow& row : rows) names.insert(row.run.unfinite_scores.begin(), row.run.unfinite_scores.end());
  return {names.begin(), names.end()};
}

}  // namespace

std::string main_score(const std::vector<SweepRow>& rows) {
  const std::vector<std::string> names = score_names(rows);
  const bool toy = std::any_of(rows.begin(), rows.end(),
                               [](const SweepRow& r) { return r.run.dataset == "ring" || r.run.dataset == "grid"; });
  for (const char* preferred : {toy ? "modes_covered" : "fid", toy ? "high_quality" : "tvd", "fid"})
    if (std::find(names.begin(), names.end(), preferred) != names.end()) return preferred;
  return names.empty() ? "" : names.front();
}

std::string csv_text(const std::vector<SweepRow>& rows) {
  const std::vector<std::string> scores = csv_score_names(rows), keys = varied_keys(rows);
  std::string out =
      "grid,rows,cols,cells,workers,seed,generations,s_per_generation,total_s,speedup,efficiency,compute_s,comm_s,"
      "comm_share,layout";
  for (const std::string& key : keys) out += "," + csv_field(key);
  out += ",overlaps";
  for (const std::string& name : scores) out += "," + name;
  out += "\n";
  for (const SweepRow& row : rows) {
    const RunRecord& r = row.run;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", r.grid_label(), r.rows, r.cols, r.rows * r.cols,
                       r.workers, r.seed, r.generations, number(r.seconds_per_generation), number(r.total_seconds, 2),
                       maybe(row.speedup), maybe(row.efficiency), number(r.compute_per_generation),
                       number(r.comm_per_generation), number(row.comm_share, 4), r.layout);
    for (const std::string& key : keys) {
      const auto it = r.values.find(key);
      out += "," + (it == r.values.end() ? std::string() : csv_field(it->second));
    }
    out += fmt::format(",{}", row.overlapped.size());
    for (const std::string& name : scores) {
      const auto it = r.scores.find(name);
      if (it != r.scores.end())
        out += "," + number(it->second, 4);
      else
        out += r.unfinite_scores.count(name) > 0 ? ",nan" : ",";
    }
    out += "\n";
  }
  return out;
}

std::string counts_text(const std::vector<SweepRow>& rows, const SweepNotes& notes) {
  std::string out = fmt::format("{} finished run{}", rows.size(), rows.size() == 1 ? "" : "s");
  if (!notes.unfinished.empty()) out += fmt::format(", {} unfinished", notes.unfinished.size());
  if (!notes.failed.empty()) out += fmt::format(", {} failed", notes.failed.size());
  if (!notes.skipped.empty()) out += fmt::format(", {} skipped", notes.skipped.size());
  return out;
}

namespace {

// sweep.md's table: a row per finished run.
std::string markdown_table(const std::vector<SweepRow>& rows) {
  const std::string score = main_score(rows);
  const std::vector<std::string> keys = varied_keys(rows);
  std::string out = "| grid | layout | W | seed |";
  for (const std::string& key : keys) out += " " + key + " |";
  out += fmt::format(" s / generation | total s | speed-up | efficiency | communication | {} |\n",
                     score.empty() ? "score" : score);
  out += "|---|---|---|---|";
  for (std::size_t i = 0; i < keys.size(); ++i) out += "---|";
  out += "---|---|---|---|---|---|\n";
  for (const SweepRow& row : rows) {
    const RunRecord& r = row.run;
    const auto it = r.scores.find(score);
    out += fmt::format("| {} | {} | {} | {} |", r.grid_label(), r.layout, r.workers, r.seed);
    for (const std::string& key : keys) out += " " + (r.values.count(key) ? r.values.at(key) : std::string("–")) + " |";
    out += fmt::format(" {:.3f}{} | {:.1f} | {} | {} | {:.1f} % | {} |\n", r.seconds_per_generation,
                       row.overlapped.empty() ? "" : " (overlapped)", r.total_seconds,
                       row.speedup ? fmt::format("{:.2f}", *row.speedup) : "–",
                       row.efficiency ? fmt::format("{:.2f}", *row.efficiency) : "–", 100.0 * row.comm_share,
                       it == r.scores.end() ? "–" : fmt::format("{:.4f}", it->second));
  }
  return out;
}

}  // namespace

std::string markdown_text(const std::vector<SweepRow>& rows, const SweepNotes& notes) {
  std::string out = "# Sweep\n\n";
  out += fmt::format("{}\n\n", notes.title);
  out += counts_text(rows, notes);
  out += ". Times are wall seconds per generation on a worker, generation 1 (warm-up) left out; total s sums every "
         "stretch of a resumed run; speed-up and efficiency are against W = 1 of the same layout, grid, seed and "
         "varied values; communication is the gather and idle phases. All rows are in sweep.csv.\n\n";
  out += markdown_table(rows);
  std::vector<std::string> overlapped;
  for (const SweepRow& row : rows)
    if (!row.overlapped.empty())
      overlapped.push_back(fmt::format("{} ran at the same time as {}", fs_name(row.run.folder),
                                       fmt::format("{}", fmt::join(row.overlapped, ", "))));
  const auto list = [&out](const char* heading, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    out += fmt::format("\n{}:\n\n", heading);
    for (const std::string& line : lines) out += "- " + line + "\n";
  };
  list("Overlapped in time (their cores were shared: their times and speed-ups are not to be trusted)", overlapped);
  list("Failed", notes.failed);
  list("Unfinished (run the sweep again to resume them)", notes.unfinished);
  list("Skipped", notes.skipped);
  if (!notes.plots.empty()) out += "\n## Plots\n";
  for (const auto& [file, caption] : notes.plots) out += fmt::format("\n{}\n\n![{}]({})\n", caption, caption, file);
  return out;
}

}  // namespace cellgan::sweep
