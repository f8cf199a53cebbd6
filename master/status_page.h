// The page of GET / (status_server.h): one self-contained HTML document
// (inline CSS and script, nothing fetched from elsewhere) that polls
// /status every second and draws the grid: one square per cell
// (class "cell", data-cell, data-worker, data-state), coloured by its score
// from green (the lowest of the grid) through yellow to red (the highest),
// grey without a score; the workers with their state and heartbeat age; the
// latest events; and /preview.png when there is one.
//
// Thread-safety: returns a constant.
#pragma once

namespace cellgan {

const char* status_page_html();

}  // namespace cellgan
