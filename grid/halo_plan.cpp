// The halo exchange plan of one worker: which of its cells other workers
// need each generation, and which foreign cells it needs (grid/partition.h).
//
// Derived directly from the definition (for every cell, who has it in a
// neighbourhood) rather than from the symmetry of the neighbourhoods, so the
// plan stays right for any neighbourhood kind.
//
// Thread-safety: pure function over immutable values; safe from any thread.
#include "grid/partition.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cellgan {
namespace {

void check_partition(const GridShape& grid, const Partition& partition, int worker) {
  if (partition.owner.size() != static_cast<std::size_t>(grid.cell_count()) ||
      partition.cells_of.size() != static_cast<std::size_t>(partition.workers)) {
    throw std::invalid_argument("halo_plan: partition made for another grid: expected " +
                                std::to_string(grid.cell_count()) + " owners and " +
                                std::to_string(partition.workers) + " cell lists");
  }
  for (int owner : partition.owner) {
    if (owner < 0 || owner >= partition.workers) {
      throw std::invalid_argument("halo_plan: partition owner " + std::to_string(owner) +
                                  " is not a worker: expected 0.." + std::to_string(partition.workers - 1));
    }
  }
  if (worker < 0 || worker >= partition.workers) {
    throw std::invalid_argument("halo_plan: worker " + std::to_string(worker) +
                                " is not in the partition: expected 0.." + std::to_string(partition.workers - 1));
  }
}

void insert_sorted_unique(std::vector<int>& values, int value) {
  const auto it = std::lower_bound(values.begin(), values.end(), value);
  if (it == values.end() || *it != value) values.insert(it, value);
}

}  // namespace

HaloPlan halo_plan(const GridShape& grid, const Partition& partition, NeighbourhoodKind kind, int worker) {
  check_partition(grid, partition, worker);
  const auto owner_of = [&](int cell) { return partition.owner[static_cast<std::size_t>(cell)]; };

  // needed_by[cell]: the other workers whose cells have `cell` (one of ours)
  // in their neighbourhood.
  std::vector<std::vector<int>> needed_by(static_cast<std::size_t>(grid.cell_count()));
  std::vector<int> receives;
  for (int cell = 0; cell < grid.cell_count(); ++cell) {
    const int cell_owner = owner_of(cell);
    for (int member : neighbourhood(grid, cell, kind)) {
      const int member_owner = owner_of(member);
      if (cell_owner == worker && member_owner != worker) insert_sorted_unique(receives, member);
      if (cell_owner != worker && member_owner == worker) {
        insert_sorted_unique(needed_by[static_cast<std::size_t>(member)], cell_owner);
      }
    }
  }

  HaloPlan plan;
  for (int cell = 0; cell < grid.cell_count(); ++cell) {  // ascending by cell
    auto& to = needed_by[static_cast<std::size_t>(cell)];
    if (!to.empty()) plan.sends.push_back({cell, std::move(to)});
  }
  plan.receive_from.reserve(receives.size());
  for (int cell : receives) plan.receive_from.push_back(owner_of(cell));
  plan.receives = std::move(receives);
  return plan;
}

}  // namespace cellgan
