// The gnuplot script and its data files: every plot the summary embeds is
// drawn by the script, from data files that hold the rows' values.
#include "sweep/sweep_plots.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace cellgan::sweep {
namespace {

namespace fs = std::filesystem;

SweepRow row(int side, int workers, std::uint64_t seed, double seconds, double modes) {
  RunRecord r;
  r.rows = r.cols = side;
  r.workers = workers;
  r.seed = seed;
  r.finished = true;
  r.dataset = "ring";
  r.seconds_per_generation = seconds;
  r.compute_per_generation = 0.75 * seconds;
  r.comm_per_generation = 0.25 * seconds;
  r.scores = {{"modes_covered", modes}, {"mode_count", 8}};
  SweepRow out;
  out.run = r;
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SweepPlots, TheScriptDrawsEveryPlotFromTheDataFiles) {
  const fs::path dir = fs::temp_directory_path() / ("sweep_plots_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::vector<SweepRow> rows = sweep_rows({row(1, 1, 1, 1.0, 2).run, row(1, 1, 2, 3.0, 4).run,
                                                 row(2, 1, 1, 4.0, 6).run, row(2, 2, 1, 2.5, 6).run});
  const auto plots = write_plot_files(rows, dir.string());
  ASSERT_EQ(plots.size(), 4u);
  const std::string script = read(dir / "plots" / "sweep.gp");
  for (const auto& [file, caption] : plots) EXPECT_NE(script.find("'../" + file + "'"), std::string::npos) << file;
  EXPECT_NE(script.find("modes covered (of 8, higher is better)"), std::string::npos);
  EXPECT_NE(script.find("wall time per generation (s)"), std::string::npos);
  // 1x1 with W = 1: the mean of its two seeds, and their range.
  EXPECT_NE(read(dir / "plots" / "time.dat").find("0 2.000000 1.000000 3.000000"), std::string::npos);
  // Modes: mean 3 and standard deviation sqrt(2) over the seeds.
  EXPECT_NE(read(dir / "plots" / "score.dat").find("0 3.000000 1.414214"), std::string::npos);
  // 2x2 at W = 2: speed-up 4 / 2.5 = 1.6, efficiency 0.8.
  EXPECT_NE(read(dir / "plots" / "speedup.dat").find("2 1.600000 0.800000"), std::string::npos);
  EXPECT_NE(read(dir / "plots" / "phases.dat").find("\"2x2 W2\" 1.875000 0.625000 75.000 25.000"), std::string::npos);
  fs::remove_all(dir);
}

// speedup.png says what its points are the mean of, as time.png and
// score.png do: the seeds, and the values of a varied key.
TEST(SweepPlots, TheSpeedupTitleNamesWhatItsPointsAverage) {
  const fs::path dir = fs::temp_directory_path() / ("sweep_plots_title_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::vector<RunRecord> runs;
  for (const char* size : {"50", "100"})
    for (int w : {1, 2}) {
      runs.push_back(row(2, w, 1, 4.0 / w, 6).run);
      runs.back().values["training.batch_size"] = size;
    }
  write_plot_files(sweep_rows(runs), dir.string());
  EXPECT_NE(read(dir / "plots" / "sweep.gp")
                .find("(W = 1 of the same grid, seed and values; mean over seeds and the values of "
                      "training.batch_size)"),
            std::string::npos);
  for (RunRecord& r : runs) r.values.clear();
  write_plot_files(sweep_rows({runs[0], runs[1]}), dir.string());
  EXPECT_NE(read(dir / "plots" / "sweep.gp").find("(W = 1 of the same grid and seed; mean over seeds)"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(SweepPlots, NoRowsNoPlots) { EXPECT_TRUE(write_plot_files({}, "/nonexistent/never-written").empty()); }

}  // namespace
}  // namespace cellgan::sweep
