// Splitting the cells over W workers: rectangular blocks when W factors to
// fit the grid as evenly as strips would, row-major strips otherwise (rules
// in grid/partition.h).
//
// Thread-safety: pure functions over immutable values; safe from any thread.
#include "grid/partition.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace cellgan {
namespace {

// First index of band `band` when `length` items are cut into `bands` bands
// as evenly as possible, the first (length % bands) bands one item longer.
int band_start(int length, int bands, int band) {
  const int base = length / bands;
  const int extra = length % bands;
  return band * base + (band < extra ? band : extra);
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The factorisation workers = pr * pc with pr <= rows and pc <= cols whose
// largest block is smallest, then closest to square (smallest |pr - pc|),
// then with more rows. Returns false when there is none, or when its largest
// block would hold more cells than the largest of W row-major strips: a
// worker with more cells than the others holds every generation back.
bool block_dims(const GridShape& grid, int workers, int& best_rows, int& best_cols) {
  bool found = false;
  int best_largest = 0;
  for (int pr = 1; pr <= workers; ++pr) {
    if (workers % pr != 0) continue;
    const int pc = workers / pr;
    if (pr > grid.rows() || pc > grid.cols()) continue;
    const int largest = ceil_div(grid.rows(), pr) * ceil_div(grid.cols(), pc);
    // pr grows through the loop, so "<=" hands ties to more rows.
    if (!found || largest < best_largest ||
        (largest == best_largest && std::abs(pr - pc) <= std::abs(best_rows - best_cols))) {
      best_rows = pr;
      best_cols = pc;
      best_largest = largest;
      found = true;
    }
  }
  return found && best_largest <= ceil_div(grid.cell_count(), workers);
}

void assign_blocks(const GridShape& grid, Partition& p) {
  for (int br = 0; br < p.worker_rows; ++br) {
    const int row_begin = band_start(grid.rows(), p.worker_rows, br);
    const int row_end = band_start(grid.rows(), p.worker_rows, br + 1);
    for (int bc = 0; bc < p.worker_cols; ++bc) {
      const int col_begin = band_start(grid.cols(), p.worker_cols, bc);
      const int col_end = band_start(grid.cols(), p.worker_cols, bc + 1);
      const int worker = br * p.worker_cols + bc;
      for (int r = row_begin; r < row_end; ++r) {
        for (int c = col_begin; c < col_end; ++c) p.owner[static_cast<std::size_t>(grid.id({r, c}))] = worker;
      }
    }
  }
}

void assign_strips(const GridShape& grid, Partition& p) {
  for (int w = 0; w < p.workers; ++w) {
    const int begin = band_start(grid.cell_count(), p.workers, w);
    const int end = band_start(grid.cell_count(), p.workers, w + 1);
    for (int cell = begin; cell < end; ++cell) p.owner[static_cast<std::size_t>(cell)] = w;
  }
}

}  // namespace

Partition partition_cells(const GridShape& grid, int workers) {
  if (workers < 1 || workers > grid.cell_count()) {
    throw std::invalid_argument("partition_cells: workers " + std::to_string(workers) + " does not fit a " +
                                std::to_string(grid.rows()) + "x" + std::to_string(grid.cols()) +
                                " grid: expected 1.." + std::to_string(grid.cell_count()));
  }
  Partition p;
  p.workers = workers;
  p.owner.assign(static_cast<std::size_t>(grid.cell_count()), -1);
  p.blocks = block_dims(grid, workers, p.worker_rows, p.worker_cols);
  if (p.blocks) {
    assign_blocks(grid, p);
  } else {
    p.worker_rows = workers;
    p.worker_cols = 1;
    assign_strips(grid, p);
  }
  p.cells_of.assign(static_cast<std::size_t>(workers), {});
  for (int cell = 0; cell < grid.cell_count(); ++cell) {
    p.cells_of[static_cast<std::size_t>(p.owner[static_cast<std::size_t>(cell)])].push_back(cell);
  }
  return p;
}

}  // namespace cellgan
