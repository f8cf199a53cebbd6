// Choosing and writing the run's result: every cell's ensemble, and the
// grid-wide ensemble when evaluation.grid_ensemble is on, is scored on
// final_samples samples (same latent seed for all, so the comparison is
// fair); the lowest objective (FID for images, mode TVD for toy data)
// wins; then ensemble.bin, samples.png, result.json and summary.txt are
// written atomically into the run directory.
//
// Thread-safety: one thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/nn/ensemble.h"
#include "common/nn/scores.h"
#include "master/master_layout.h"

namespace cellgan {

// The `cell` of the grid-wide ensemble, which belongs to no single cell.
constexpr int kGridEnsemble = -1;

struct CellResult {
  int cell = -1;  // kGridEnsemble for the grid-wide ensemble
  std::map<std::string, double> scores;
};

// "cell 3", or "grid" for the grid-wide ensemble.
std::string ensemble_label(int cell);
// The best result as `layout` names it (MasterLayout::description()):
// coevolution "cell 3" or "grid"; data_parallel "the replicas' generator";
// per_class "class 3", or "every class (the conditional mixture)" for the whole.
std::string best_label(const LayoutDescription& layout, int cell);

// The grid-wide ensemble: the first `population_size` generators of every
// cell ensemble (a cell's own, latest ones; CellTrainer::ensemble puts
// them first), copied, with equal weights. Needs at least one ensemble.
Ensemble grid_ensemble(const std::vector<Ensemble>& cells, std::int64_t population_size);

// docs/operations.md, "Faults: what is survived", nothing non-finite is chosen: removes from each ensemble every
// generator with non-finite weights (the others' weights renormalised),
// and removes an ensemble left with no generator or no weight. Returns a
// line per removal, for events.log.
std::vector<std::string> drop_non_finite_generators(std::vector<Ensemble>& ensembles);

// Scores every ensemble; returns results in input order.
std::vector<CellResult> score_ensembles(const Config& config, std::vector<Ensemble>& ensembles,
                                        SampleScorer& scorer);

// Index of the best result: the lowest score under `objective` (see
// objective_name()); ties go to the lower cell, non-finite scores lose.
std::size_t best_result(const std::vector<CellResult>& results, const std::string& objective);

// Writes a PNG of `count` samples of the ensemble (2,500 points for toy
// data), drawn as sample_png.h draws them.
void write_ensemble_png(const Config& config, const std::string& path, Ensemble& ensemble, std::int64_t count);

// result.json also records the BLAS kernels (math_kernels.h) and the
// devices (common/nn/device.h) the master scored with and each worker
// trained with, in worker rank order, from `context`; summary.txt names
// the best result and the topology as `layout` does.
void write_result_files(const Config& config, const LayoutDescription& layout, const std::string& dir,
                        Ensemble& best, const std::vector<CellResult>& results, std::size_t best_index,
                        double seconds, const FinishContext& context);

}  // namespace cellgan
