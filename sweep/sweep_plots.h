// The plots of a sweep, drawn by gnuplot (Debian's gnuplot-nox, installed
// by deploy/install-deps.sh) from a script and data files this module
// writes into DIR/plots/, so a user can edit and re-run them
// (gnuplot DIR/plots/sweep.gp). The PNGs go to DIR:
//
// time.png and score.png are drawn when the sweep has more than one grid
// or W, speedup.png when it has more than one W:
//
//   time.png     seconds per generation against grid size, a line per W
//                (the mean over seeds, their range as error bars)
//   speedup.png  speed-up and efficiency against W, a line per grid
//   score.png    the main score (FID, or the toy score) against grid size,
//                a line per W, the seeds' mean and standard deviation
//   phases.png   computation and communication per generation, stacked,
//                a bar per grid and W: in seconds and in percent
//   vary.png     with a varied key (--vary): time and score against it
//                (vary_plot.h)
//
// Thread-safety: one caller at a time per DIR; it runs gnuplot as a child.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sweep/sweep_table.h"

namespace cellgan::sweep {

// The gnuplot script that draws the plots from the data files beside it
// (run from DIR/plots/); the data files are written by write_plot_files.
std::string gnuplot_script(const std::vector<SweepRow>& rows);

// Writes DIR/plots/ (script and data). Returns the plots it will draw, as
// (file name in DIR, caption); empty when there are no rows.
std::vector<std::pair<std::string, std::string>> write_plot_files(const std::vector<SweepRow>& rows,
                                                                  const std::string& dir);

// Runs `gnuplot` (the program of that name on PATH, or $CELLGAN_GNUPLOT)
// on DIR/plots/sweep.gp. Returns an empty string on success, else why it
// failed (gnuplot missing, or its exit status and the file of its output).
std::string draw_plots(const std::string& dir);

}  // namespace cellgan::sweep
