// The page of GET / (status_server.h): one HTML document (master/pages/
// status.html, inline CSS and script) that loads Chart.js from /chart.js
// and polls /status every second. It draws the grid: one square per cell
// (class "cell", data-cell, data-worker, data-state), coloured by its score
// from green (the lowest of the grid) through yellow to red (the highest),
// grey without a score; the workers with their state and heartbeat age; the
// latest events; /preview.png with its generation and cell when there is
// one; and, from /history each time a generation is written, the curves
// (pages/curves.js): objective, losses and learning rates per cell.
//
// Thread-safety: returns a constant, made at the first call.
#pragma once

#include <string>

namespace cellgan {

const std::string& status_page_html();

}  // namespace cellgan
