// The two records of a run folder (run_files.h), each as a typed value
// with its one writer and its one reader: metrics.jsonl and result.json.
// Nothing else in cellgan knows their keys.
//
// ## metrics.jsonl
//
// One line per record of a generation (a cell of coevolution, a class of
// per_class, the replicas' one record of data_parallel): the typed
// GenerationRecord. The master writes the lines (master/run_directory.h);
// the report and the status page (master/run_history.h), resume
// (master/resume_plan.h) and the sweep (sweep/run_record.h) read them.
//
//   {"cell": 0, "generation": 1, "generator_loss": 0.69,
//    "discriminator_loss": 1.38, "scores": {"fid": 41.2, ...},
//    "generator_lrs": [...], "discriminator_lrs": [...],
//    "mixture_weights": [...], "generators_replaced": 0,
//    "discriminators_replaced": 0, "mixture_improved": false,
//    "seconds": {"gather": 0.01, "train": 1.2, ...},
//    "counts": {...}}                       (counts only when it has any)
//
// - A number that is not finite is written as null, and null reads back
//   as NaN.
// - Reading needs "cell" and "generation". Any other key may be missing
//   (lines written by hand, or by an older cellgan): a missing loss reads
//   as NaN, a missing map or list as empty, a missing count as 0. A key
//   that is present with a value of the wrong kind makes the line no
//   record. Keys not listed above are ignored.
// - The preview samples and the events of a record are not part of a line.
//
// ## result.json
//
// The final scores of a run, written last: its presence marks a finished
// run. The master writes it (master/final_ensemble.h); the report
// (master/run_report.h) and the sweep (sweep/run_record.h) read it.
//
//   {"best": "cell 3", "best_cell": 3, "best_label": "cell 3",
//    "objective": "fid", "scores": {"fid": 31.4, ...},
//    "mixture_weights": [...], "final_samples": 10000,
//    "cells": [{"cell": 0, "scores": {...}}, ...],
//    "grid_ensemble": {"scores": {...}} or null,
//    "blas_kernels": {"master": "...", "workers": ["...", ...]},
//    "device": {"master": "cpu", "workers": ["cpu", ...]},
//    "seconds": 512.3}
//
// - A score that is not finite is written as null, and null reads back as
//   NaN.
// - Reading needs "scores" and "seconds". Any other key may be missing (a
//   result of an older cellgan has no best_label, blas_kernels or device):
//   it reads as its default below. A key present with a value of the wrong
//   kind makes the file no result. Keys not listed above are ignored.
//
// Thread-safety: a plain value type and pure functions; the readers read
// a file once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/generation_record.h"

namespace cellgan {

// ---- metrics.jsonl

// One line, with its '\n'.
std::string to_json_line(const GenerationRecord& record);

// The record of one line (without its '\n'), or std::nullopt when it is
// not one; then `why`, when given, says what is wrong.
std::optional<GenerationRecord> parse_metrics_line(const std::string& line, std::string* why = nullptr);

// Every record of the metrics.jsonl at `path`, in file order. A missing
// file holds none; empty and blank lines are skipped; a last line without
// its newline (the master is appending it, or an interruption cut it) is
// left out. Throws InputError "PATH:N: not a metrics record: WHY" for the
// first complete line N that is not a record; with `unreadable` given, such
// lines are skipped instead and that text added to it for each.
std::vector<GenerationRecord> read_metrics(const std::string& path, std::vector<std::string>* unreadable = nullptr);

// ---- result.json

struct EnsembleScores {
  int cell = 0;
  std::map<std::string, double> scores;
};

struct ResultRecord {
  std::string best;        // "cell 3", or "grid" for the grid-wide ensemble ("" when missing)
  int best_cell = 0;       // -1 for the grid-wide ensemble
  std::string best_label;  // as the layout names it ("" when missing: then `best` names it)
  std::string objective;   // the score minimised: fid, or mode_tvd for the toy mixtures
  std::map<std::string, double> scores;  // the best ensemble's
  std::vector<double> mixture_weights;   // the best ensemble's
  std::int64_t final_samples = 0;        // the samples each ensemble was scored on
  std::vector<EnsembleScores> cells;     // every cell ensemble's
  std::optional<std::map<std::string, double>> grid_ensemble;  // the grid-wide ensemble's, when scored
  std::string master_kernels;            // the BLAS kernels (math_kernels.h)
  std::vector<std::string> worker_kernels;  // in worker rank order
  std::string master_device;
  std::vector<std::string> worker_devices;  // in worker rank order
  std::string precision;                    // training.precision ("" when missing)
  double seconds = 0.0;                     // wall seconds of the stretch that finished the run
};

// result.json's text: one JSON object, indented by 2, and a newline.
std::string to_json(const ResultRecord& result);

// The record of result.json's text; `path` names the file in the error.
// Throws InputError "PATH: not a result of cellgan: WHY".
ResultRecord parse_result(const std::string& text, const std::string& path);

// Reads `dir`/result.json: std::nullopt when there is none; throws
// InputError as parse_result does, or naming the file when it cannot be
// read.
std::optional<ResultRecord> read_result(const std::string& dir);

}  // namespace cellgan
