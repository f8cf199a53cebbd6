// The state of one cell between generations: everything a checkpoint must
// hold to continue a cell exactly (docs/operations.md, "Faults: what is survived"). Random draws are re-derived
// from (seed, cell, generation) at the start of every generation, so no
// RNG state needs saving.
//
// Thread-safety: belongs to the training thread.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "common/nn/individual.h"

namespace cellgan {

struct CellState {
  int cell = 0;
  // Generations completed so far.
  std::int64_t generation = 0;
  // The local populations, population_size each.
  std::vector<Individual> generators;
  std::vector<Individual> discriminators;
  // Neighbours' centre generators as last gathered (neighbourhood order,
  // the cell itself excluded): with the local generators they form the
  // mixture whose weights are below. Stored without Adam state.
  std::vector<Individual> neighbour_generators;
  // One weight per mixture slot: local generators first, then neighbours.
  std::vector<double> mixture_weights;
  // The mixture's objective (FID, or mode TVD for toy data) at the last ES step.
  double mixture_objective = std::numeric_limits<double>::quiet_NaN();

  // The best (lowest fitness) local individuals, sent to the neighbours.
  const Individual& centre_generator() const;
  const Individual& centre_discriminator() const;
};

}  // namespace cellgan
