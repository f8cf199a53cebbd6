// The plot of a sweep over a configuration key (cellgan sweep --vary):
// vary.png, the time per generation (left) and the main score (right)
// against the first varied key's value, one line per grid, W and value of
// any other varied key, each point the mean over seeds. The x axis is
// numeric when every value is a number (logarithmic when they are all
// positive and span a factor of 8 or more), else one tic per value in
// table order. Drawn with the other plots (sweep_plots.h) from
// DIR/plots/vary.dat.
//
// Thread-safety: pure functions, and a file write to the caller's folder.
#pragma once

#include <string>
#include <vector>

#include "sweep/sweep_table.h"

namespace cellgan::sweep {

// The gnuplot lines of vary.png ("" when no key was varied).
std::string vary_plot_script(const std::vector<SweepRow>& rows);
// Writes DIR/plots/vary.dat; returns false (and writes nothing) when no
// key was varied.
bool write_vary_data(const std::vector<SweepRow>& rows, const std::string& plots_dir);

}  // namespace cellgan::sweep
