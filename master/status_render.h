// A run's status (status_board.h) as the status server serves it: JSON for
// GET /status and the Prometheus text exposition format (version 0.0.4) for
// GET /metrics. Both carry the same figures.
//
// JSON (every time in seconds; a number that is unknown or not finite is
// null):
//   {"phase", "detail", "grid": {"rows", "cols"}, "layout", "objective",
//    "unit" and "curve_unit" (what the layout calls a grid position and a
//    curve's line: common/layout_description.h),
//    "generations": {"total", "done"}, "elapsed_seconds", "eta_seconds",
//    "best": {"cell", "score"} or null,
//    "cells": [{"cell", "row", "col", "generation", "score", "worker", "state"}],
//    "workers": [{"rank", "state", "generation", "heartbeat_age_seconds"}],
//    "events": [{"seconds", "line"}], "events_total",
//    "preview": {"generation", "cell" (or null), "url": "/preview.png"} or null}
//
// Prometheus: gauges and counters named cellgan_*, with the labels cell,
// worker, objective, state and phase (see status_render.cpp for the list).
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "master/status_board.h"

namespace cellgan {

std::string status_json(const StatusSnapshot& s);
std::string status_metrics(const StatusSnapshot& s);

}  // namespace cellgan
