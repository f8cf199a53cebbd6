// The curves of a run, read from its own metrics.jsonl (docs/operations.md,
// "The run folder"), as the status page and report.html draw them.
//
// For each record of a generation (a cell of coevolution, a class of
// per_class, the replicas' one record of data_parallel) and each written
// generation: the objective, the losses of the best G and D, and the mean
// learning rate of the Gs and of the Ds; and over all records, each
// generation's lowest and mean objective. As JSON:
//
//   {"objective": "fid",
//    "cells": [{"cell": 0, "generation": [1, 2, ...], "objective": [...],
//               "generator_loss": [...], "discriminator_loss": [...],
//               "generator_lr": [...], "discriminator_lr": [...]}, ...],
//    "grid": {"generation": [...], "best": [...], "mean": [...]}}
//
// Arrays of one cell have one entry per generation it wrote, in order;
// a value that is missing or not finite is null. `objective` "" takes the
// run's from its lines (mode_tvd where they score the toy modes, else fid).
// A missing file is a run with no generation yet. A last line without its
// newline (the master is appending it) is left out, and so is a last
// generation with fewer records than the one before (half written).
//
// Thread-safety: a free function; reads the file once.
#pragma once

#include <string>
#include <vector>

namespace cellgan {

// Throws InputError naming the file and line number when a complete line
// is not a metrics record; with `unreadable` given, such lines are left out
// and named there instead (read_metrics).
std::string run_history_json(const std::string& metrics_path, const std::string& objective,
                             std::vector<std::string>* unreadable = nullptr);

}  // namespace cellgan
