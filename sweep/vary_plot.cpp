// The plot against a varied key (see vary_plot.h).
#include "sweep/vary_plot.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "common/image_files.h"
#include "sweep/number_text.h"

namespace cellgan::sweep {

namespace {

struct Axis {
  std::string key;
  std::vector<std::string> values;  // in table order, each once
  bool numeric = true;
  bool logarithmic = false;
};

Axis axis_of(const std::vector<SweepRow>& rows) {
  Axis a;
  a.key = varied_keys(rows).front();
  for (const SweepRow& r : rows) {
    const std::string v = r.run.values.at(a.key);
    if (std::find(a.values.begin(), a.values.end(), v) == a.values.end()) a.values.push_back(v);
  }
  double lo = INFINITY, hi = -INFINITY;
  for (const std::string& v : a.values) {
    const auto x = number_of(v);
    if (!x) a.numeric = false;
    else lo = std::min(lo, *x), hi = std::max(hi, *x);
  }
  a.logarithmic = a.numeric && lo > 0 && hi / lo >= 8.0;
  return a;
}

// A line's label: grid, W and the other varied keys' values.
std::string series_of(const SweepRow& r, const std::string& x_key) {
  std::string label = fmt::format("{} W{}", r.run.grid_label(), r.run.workers);
  for (const auto& [key, value] : r.run.values)
    if (key != x_key) label += fmt::format(" {}={}", key.substr(key.rfind('.') + 1), value);
  return label;
}

// Each line's points: x -> the seeds' time and score values.
using Points = std::map<double, std::pair<std::vector<double>, std::vector<double>>>;

std::map<std::string, Points> lines_of(const std::vector<SweepRow>& rows, const Axis& axis) {
  const std::string score = main_score(rows);
  std::map<std::string, Points> lines;
  for (const SweepRow& r : rows) {
    const std::string& v = r.run.values.at(axis.key);
    const double x = axis.numeric ? *number_of(v)
                                  : static_cast<double>(std::find(axis.values.begin(), axis.values.end(), v) -
                                                        axis.values.begin());
    auto& point = lines[series_of(r, axis.key)][x];
    point.first.push_back(r.run.seconds_per_generation);
    if (const auto it = r.run.scores.find(score); it != r.run.scores.end()) point.second.push_back(it->second);
  }
  return lines;
}

double mean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += x;
  return xs.empty() ? NAN : s / static_cast<double>(xs.size());
}

}  // namespace

std::string vary_plot_script(const std::vector<SweepRow>& rows) {
  if (rows.empty() || varied_keys(rows).empty()) return "";
  const Axis axis = axis_of(rows);
  const std::map<std::string, Points> lines = lines_of(rows, axis);
  const std::string score = main_score(rows);
  // noenhanced: keys and scores are written as they are (an '_' is no subscript).
  std::string s = "set output '../vary.png'\nset terminal pngcairo noenhanced size 1100,520 font 'Sans,11'\n";
  s += fmt::format("set multiplot layout 1,2 title 'Against {} (mean over seeds)'\nunset title\nset bmargin\n",
                   axis.key);
  s += fmt::format("set xlabel '{}' offset 0,0\nset xrange [*:*]\nset key top left\nset ytics autofreq\nset xtics norotate\n", axis.key);
  if (axis.logarithmic) s += "set logscale x 2\n";
  if (axis.numeric) {
    s += "set xtics autofreq\n";
  } else {
    s += "set xtics (";
    for (std::size_t i = 0; i < axis.values.size(); ++i) s += fmt::format("{}\"{}\" {}", i ? ", " : "", axis.values[i], i);
    s += fmt::format(")\nset xrange [-0.5:{}.5]\n", axis.values.size() - 1);
  }
  const auto plot = [&](int column) {
    std::string p = "plot ";
    std::size_t i = 0;
    for (const auto& [label, points] : lines)
      p += fmt::format("{}'vary.dat' index {} using 1:{} with linespoints lw 2 pt 7 title '{}'", i ? ", \\\n     " : "",
                       i, column, label), ++i;
    return p + "\n";
  };
  s += "set ylabel 'wall time per generation (s)'\nset yrange [0:*]\n" + plot(2);
  if (!score.empty()) s += fmt::format("set ylabel '{}'\nset yrange [*:*]\n", score) + plot(3);
  s += "unset multiplot\nunset logscale x\nset terminal pngcairo noenhanced size 900,560 font 'Sans,11'\n";
  return s;
}

bool write_vary_data(const std::vector<SweepRow>& rows, const std::string& plots_dir) {
  if (rows.empty() || varied_keys(rows).empty()) return false;
  const Axis axis = axis_of(rows);
  std::string dat = fmt::format("# {} mean_s_per_generation mean_{}  (one block per line of the plot)\n", axis.key,
                                main_score(rows));
  for (const auto& [label, points] : lines_of(rows, axis)) {
    dat += fmt::format("# {}\n", label);
    for (const auto& [x, values] : points)
      dat += fmt::format("{} {:.6f} {}\n", x, mean(values.first),
                         values.second.empty() ? std::string("NaN") : fmt::format("{:.6f}", mean(values.second)));
    dat += "\n\n";
  }
  write_file_atomic((std::filesystem::path(plots_dir) / "vary.dat").string(), dat);
  return true;
}

}  // namespace cellgan::sweep
