// The plots of a sweep (see sweep_plots.h).
#include "sweep/sweep_plots.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "common/image_files.h"
#include "launch/child_process.h"
#include "sweep/vary_plot.h"

namespace cellgan::sweep {

namespace fs = std::filesystem;

namespace {

struct Stats {
  double mean = 0, sd = 0, lo = 0, hi = 0;
  int n = 0;
};

Stats stats(const std::vector<double>& xs) {
  Stats s;
  s.n = static_cast<int>(xs.size());
  if (xs.empty()) return s;
  s.lo = *std::min_element(xs.begin(), xs.end());
  s.hi = *std::max_element(xs.begin(), xs.end());
  for (double x : xs) s.mean += x;
  s.mean /= s.n;
  for (double x : xs) s.sd += (x - s.mean) * (x - s.mean);
  s.sd = s.n > 1 ? std::sqrt(s.sd / (s.n - 1)) : 0.0;
  return s;
}

// The grids of the rows in table order, and the worker counts, ascending.
std::vector<std::string> grids_of(const std::vector<SweepRow>& rows) {
  std::vector<std::string> grids;
  for (const SweepRow& r : rows)
    if (std::find(grids.begin(), grids.end(), r.run.grid_label()) == grids.end()) grids.push_back(r.run.grid_label());
  return grids;
}
std::vector<int> workers_of(const std::vector<SweepRow>& rows) {
  std::set<int> w;
  for (const SweepRow& r : rows) w.insert(r.run.workers);
  return {w.begin(), w.end()};
}

template <typename Value>
std::vector<double> values(const std::vector<SweepRow>& rows, const std::string& grid, int workers, Value value) {
  std::vector<double> out;
  for (const SweepRow& r : rows)
    if (r.run.grid_label() == grid && r.run.workers == workers)
      if (const auto v = value(r)) out.push_back(*v);
  return out;
}

// The score's name on the plot's axis and in its title.
std::string score_name(const std::string& score) {
  if (score == "fid") return "FID";
  if (score == "tvd") return "TVD";
  if (score == "modes_covered") return "modes covered";
  if (score == "high_quality") return "high-quality samples";
  return score;
}

std::string score_label(const std::string& score, const std::vector<SweepRow>& rows) {
  if (score == "fid") return "FID (lower is better)";
  if (score == "tvd") return "TVD (lower is better)";
  if (score == "high_quality") return "high-quality samples (fraction, higher is better)";
  if (score == "modes_covered") {
    for (const SweepRow& r : rows)
      if (const auto it = r.run.scores.find("mode_count"); it != r.run.scores.end())
        return fmt::format("modes covered (of {:.0f}, higher is better)", it->second);
    return "modes covered (higher is better)";
  }
  return score;
}

// The y range of the score plot: from 0 to all modes for the mode count.
std::string score_range(const std::string& score, const std::vector<SweepRow>& rows) {
  if (score == "high_quality") return "[0:1.05]";
  if (score != "modes_covered") return "[*:*]";
  for (const SweepRow& r : rows)
    if (const auto it = r.run.scores.find("mode_count"); it != r.run.scores.end())
      return fmt::format("[0:{:.1f}]", it->second + 0.5);
  return "[0:*]";
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// What the points of time.png and score.png are the mean of: the seeds,
// and the values of the varied keys, which vary.png shows apart.
std::string averaged_over(const std::vector<SweepRow>& rows) {
  const std::vector<std::string> keys = varied_keys(rows);
  if (keys.empty()) return "seeds";
  return fmt::format("seeds and the values of {}", fmt::join(keys, ", "));
}

// The gnuplot lines of score.png: the final score against grid size.
std::string score_plot(const std::vector<SweepRow>& rows, const std::string& score, const std::vector<int>& workers,
                       const std::string& xtics, const std::string& xrange) {
  std::string s;
  s += "set output '../score.png'\n";
  s += fmt::format("set title {}\n", quote(fmt::format("Final {} against grid size (mean and standard deviation "
                                                        "over {})",
                                                        score_name(score), averaged_over(rows))));
  s += fmt::format("set xlabel 'grid size (rows x columns)' offset 0,-1\nset bmargin 5\nset ylabel {}\n",
                   quote(score_label(score, rows)));
  // The key where the curves are not: below them when higher is better.
  const bool higher_better = score == "modes_covered" || score == "high_quality";
  s += fmt::format("set xtics ({})\nset xrange {}\nset yrange {}\nset key {} right\n", xtics, xrange,
                   score_range(score, rows), higher_better ? "bottom" : "top");
  s += "plot ";
  for (std::size_t i = 0; i < workers.size(); ++i)
    s += fmt::format("{}'score.dat' index {} using ($1+{:.2f}):2:3 with yerrorlines lw 2 pt 7 title 'W = {}'",
                     i ? ", \\\n     " : "", i, 0.04 * (static_cast<double>(i) - 0.5 * (workers.size() - 1)),
                     workers[i]);
  s += "\nset key top left\n";
  return s;
}

// The gnuplot lines of time.png: time per generation against grid size, a line per W.
std::string time_plot(const std::vector<SweepRow>& rows, const std::vector<int>& workers, const std::string& xtics,
                      const std::string& xrange) {
  std::string s;
  s += "set output '../time.png'\n";
  s += fmt::format("set title 'Time per generation against grid size (mean over {}, their range as error bars)'\n",
                   averaged_over(rows));
  s += "set xlabel 'grid size (rows x columns)' offset 0,-1\nset bmargin 5\n"
       "set ylabel 'wall time per generation (s)'\n";
  s += fmt::format("set xtics ({})\nset xrange {}\nset yrange [0:*]\n", xtics, xrange);
  s += "plot ";
  for (std::size_t i = 0; i < workers.size(); ++i)
    s += fmt::format("{}'time.dat' index {} using ($1+{:.2f}):2:3:4 with yerrorlines lw 2 pt 7 title 'W = {}'",
                     i ? ", \\\n     " : "", i, 0.04 * (static_cast<double>(i) - 0.5 * (workers.size() - 1)),
                     workers[i]);
  s += "\n";
  return s;
}

// The gnuplot lines of speedup.png: speed-up and efficiency against W, a
// line per grid, each point the mean of its runs' (averaged_over).
std::string speedup_plot(const std::vector<SweepRow>& rows, const std::vector<std::string>& grids,
                         const std::vector<int>& workers) {
  std::string s;
  const int max_w = workers.empty() ? 1 : workers.back();
  const bool varied = !varied_keys(rows).empty();
  s += "set output '../speedup.png'\n";
  s += fmt::format("set multiplot layout 1,2 title {}\n",
                   quote(fmt::format("Speed-up and efficiency against the worker count (W = 1 of the same {}; mean "
                                     "over {})",
                                     varied ? "grid, seed and values" : "grid and seed", averaged_over(rows))));
  s += "unset title\nset bmargin\nset xlabel 'workers W' offset 0,0\n";
  std::string wtics;
  for (std::size_t i = 0; i < workers.size(); ++i) wtics += fmt::format("{}{}", i ? ", " : "", workers[i]);
  s += fmt::format("set xtics ({})\nset xrange [0.8:{}]\n", wtics, max_w + 0.2);
  s += "set ylabel 'speed-up (x)'\nset yrange [0:*]\n";
  s += "plot x with lines dt 2 lc rgb '#888888' title 'ideal'";
  for (std::size_t i = 0; i < grids.size(); ++i)
    s += fmt::format(", \\\n     'speedup.dat' index {} using 1:2 with linespoints lw 2 pt 7 title '{}'", i, grids[i]);
  s += "\nset ylabel 'efficiency (speed-up / W)'\nset yrange [0:1.2]\n";
  s += "plot 1 with lines dt 2 lc rgb '#888888' title 'ideal'";
  for (std::size_t i = 0; i < grids.size(); ++i)
    s += fmt::format(", \\\n     'speedup.dat' index {} using 1:3 with linespoints lw 2 pt 7 title '{}'", i, grids[i]);
  s += "\nunset multiplot\n";
  return s;
}

// The gnuplot lines of phases.png: computation and communication by grid and W.
std::string phases_plot() {
  std::string s;
  s += "set output '../phases.png'\n"
       "set multiplot layout 1,2 title 'Computation and communication (gather + idle) per generation, by grid and W'\n"
       "unset title\nset style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
       "set boxwidth 0.7\nset xtics rotate by -45 autofreq\nset xrange [*:*]\nset bmargin\n"
       "set xlabel 'grid, workers' offset 0,0\n"
       "set key top left\n";
  s += "set ylabel 'seconds per generation per worker (s)'\nset yrange [0:*]\n"
       "plot 'phases.dat' using 2:xtic(1) title 'computation' lc rgb '#4477aa', '' using 3 title 'communication' "
       "lc rgb '#ee6677'\n";
  s += "set ylabel 'share of the generation (%)'\nset yrange [0:119]\nset ytics 0,20,100\n"
       "plot 'phases.dat' using 4:xtic(1) title 'computation' lc rgb '#4477aa', '' using 5 title 'communication' "
       "lc rgb '#ee6677'\n"
       "unset multiplot\n";
  return s;
}

}  // namespace

std::string gnuplot_script(const std::vector<SweepRow>& rows) {
  const std::vector<std::string> grids = grids_of(rows);
  const std::vector<int> workers = workers_of(rows);
  const std::string score = main_score(rows);
  // Each grid's label, with its cells under it.
  std::string xtics;
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const std::size_t x = grids[i].find('x');
    const int cells = std::stoi(grids[i].substr(0, x)) * std::stoi(grids[i].substr(x + 1));
    xtics += fmt::format("{}\"{}\\n({} cell{})\" {}", i ? ", " : "", grids[i], cells, cells == 1 ? "" : "s", i);
  }
  const std::string xrange = fmt::format("[-0.5:{}.5]", grids.size() - 1);
  std::string s =
      "# Drawn by cellgan sweep; run again with: cd plots && gnuplot sweep.gp\n"
      "set terminal pngcairo noenhanced size 900,560 font 'Sans,11'\n"
      "set grid ytics lc rgb '#dddddd'\n"
      "set key top left\n"
      "set border 3\nset tics nomirror\n";
  // time.png and score.png against the grid, a line per W: when there is more than one of either.
  // speedup.png: when there is more than one W.
  const bool across = grids.size() > 1 || workers.size() > 1;
  if (across) s += time_plot(rows, workers, xtics, xrange);
  if (workers.size() > 1) s += speedup_plot(rows, grids, workers);
  if (across && !score.empty()) s += score_plot(rows, score, workers, xtics, xrange);
  s += phases_plot();
  s += vary_plot_script(rows);
  return s;
}

std::vector<std::pair<std::string, std::string>> write_plot_files(const std::vector<SweepRow>& rows,
                                                                  const std::string& dir) {
  if (rows.empty()) return {};
  const fs::path plots = fs::path(dir) / "plots";
  fs::create_directories(plots);
  const std::vector<std::string> grids = grids_of(rows);
  const std::vector<int> workers = workers_of(rows);
  const std::string score = main_score(rows);

  std::string time = "# grid_index mean_s_per_generation min max  (one block per W: " +
                     fmt::format("{}", fmt::join(workers, ", ")) + ")\n";
  std::string score_dat = "# grid_index mean_" + score + " sd\n";
  for (const int w : workers) {
    time += fmt::format("# W = {}\n", w);
    score_dat += fmt::format("# W = {}\n", w);
    for (std::size_t g = 0; g < grids.size(); ++g) {
      const Stats t = stats(values(rows, grids[g], w, [](const SweepRow& r) -> std::optional<double> {
        return r.run.seconds_per_generation;
      }));
      if (t.n) time += fmt::format("{} {:.6f} {:.6f} {:.6f}\n", g, t.mean, t.lo, t.hi);
      const Stats sc = stats(values(rows, grids[g], w, [&](const SweepRow& r) -> std::optional<double> {
        const auto it = r.run.scores.find(score);
        return it == r.run.scores.end() ? std::nullopt : std::optional<double>(it->second);
      }));
      if (sc.n) score_dat += fmt::format("{} {:.6f} {:.6f}\n", g, sc.mean, sc.sd);
    }
    time += "\n\n";
    score_dat += "\n\n";
  }
  std::string speedup = "# W mean_speedup mean_efficiency  (one block per grid)\n";
  std::string phases = "# label compute_s comm_s compute_% comm_%  (means over seeds)\n";
  for (const std::string& grid : grids) {
    speedup += fmt::format("# grid {}\n", grid);
    for (const int w : workers) {
      const Stats sp = stats(values(rows, grid, w, [](const SweepRow& r) { return r.speedup; }));
      const Stats ef = stats(values(rows, grid, w, [](const SweepRow& r) { return r.efficiency; }));
      if (sp.n) speedup += fmt::format("{} {:.6f} {:.6f}\n", w, sp.mean, ef.mean);
      const Stats cp = stats(values(rows, grid, w, [](const SweepRow& r) -> std::optional<double> {
        return r.run.compute_per_generation;
      }));
      const Stats cm = stats(values(rows, grid, w, [](const SweepRow& r) -> std::optional<double> {
        return r.run.comm_per_generation;
      }));
      if (!cp.n) continue;
      const double busy = cp.mean + cm.mean;
      phases += fmt::format("\"{} W{}\" {:.6f} {:.6f} {:.3f} {:.3f}\n", grid, w, cp.mean, cm.mean,
                            busy > 0 ? 100.0 * cp.mean / busy : 0.0, busy > 0 ? 100.0 * cm.mean / busy : 0.0);
    }
    speedup += "\n\n";
  }
  write_file_atomic((plots / "time.dat").string(), time);
  write_file_atomic((plots / "score.dat").string(), score_dat);
  write_file_atomic((plots / "speedup.dat").string(), speedup);
  write_file_atomic((plots / "phases.dat").string(), phases);
  write_file_atomic((plots / "sweep.gp").string(), gnuplot_script(rows));

  // The same choice as gnuplot_script's.
  const bool across = grids.size() > 1 || workers.size() > 1;
  std::vector<std::pair<std::string, std::string>> out;
  if (across) out.push_back({"time.png", "Time per generation against grid size"});
  if (workers.size() > 1) out.push_back({"speedup.png", "Speed-up and efficiency against W"});
  if (across && !score.empty())
    out.push_back({"score.png", fmt::format("Final {} against grid size", score_name(score))});
  out.push_back({"phases.png", "Computation and communication per generation"});
  if (write_vary_data(rows, plots.string()))
    out.push_back({"vary.png", fmt::format("Time per generation and final score against {}", varied_keys(rows).front())});
  return out;
}

std::string draw_plots(const std::string& dir) {
  const char* env = std::getenv("CELLGAN_GNUPLOT");
  const std::string gnuplot = env && *env ? env : "gnuplot";
  const fs::path plots = fs::path(dir) / "plots";
  const std::string log = (plots / "gnuplot.log").string();
  launch::ChildProcess child({gnuplot, "sweep.gp"}, log, plots.string());
  if (!child.started())
    return fmt::format("could not run {} ({}): install gnuplot-nox (deploy/install-deps.sh)", gnuplot,
                       child.start_error());
  const int code = child.wait();
  if (code != 0) return fmt::format("{} exited with {} (see {})", gnuplot, code, log);
  return "";
}

}  // namespace cellgan::sweep
