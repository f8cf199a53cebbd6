// The centre individuals of a cell.
#include "worker/cell_state.h"

#include <algorithm>
#include <cmath>

namespace cellgan {
namespace {

// Lowest fitness wins; NaN counts as worst; ties go to the lower index.
const Individual& best_of(const std::vector<Individual>& population) {
  auto better = [](const Individual& a, const Individual& b) {
    const double fa = std::isnan(a.fitness) ? INFINITY : a.fitness;
    const double fb = std::isnan(b.fitness) ? INFINITY : b.fitness;
    return fa < fb;
  };
  return *std::min_element(population.begin(), population.end(), better);
}

}  // namespace

const Individual& CellState::centre_generator() const { return best_of(generators); }
const Individual& CellState::centre_discriminator() const { return best_of(discriminators); }

}  // namespace cellgan
