// The cell grid: shape, cell ids, toroidal neighbourhoods (docs/architecture.md, "Processes and threads", §3).
//
// Cells are numbered row-major: id = row * cols + col. Coordinates are
// always (row, col) for both the cells and the neighbourhood; there is no
// [x][y] vs [y][x] split, so Lipizzaner's transposition bug cannot arise.
//
// A neighbourhood lists the centre cell first, then the neighbours in a
// fixed order, wrapping around the torus, with repeats removed (first
// occurrence kept):
//   von Neumann: self, north (r-1,c), south (r+1,c), west (r,c-1), east (r,c+1)
//   Moore:       the above, then (r-1,c-1), (r-1,c+1), (r+1,c-1), (r+1,c+1)
// This order is the order of the mixture weights and of the gathered
// populations, and is part of the run's determinism.
//
// Thread-safety: immutable value types and pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "common/config.h"

namespace cellgan {

struct CellCoord {
  int row = 0;
  int col = 0;
  bool operator==(const CellCoord& o) const { return row == o.row && col == o.col; }
};

class GridShape {
 public:
  // Throws std::invalid_argument unless rows >= 1, cols >= 1 and rows*cols
  // fits an int (the configuration's checks of grid.rows and grid.cols
  // keep a user's grid within that).
  GridShape(int rows, int cols);
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int cell_count() const { return rows_ * cols_; }
  int id(CellCoord c) const { return c.row * cols_ + c.col; }
  CellCoord coord(int id) const { return {id / cols_, id % cols_}; }
  // The cell at (row, col) after wrapping both around the torus.
  int wrapped_id(int row, int col) const;

 private:
  int rows_;
  int cols_;
};

// Cell ids of the neighbourhood of `cell`, centre first (see above).
// Throws std::invalid_argument unless 0 <= cell < grid.cell_count().
std::vector<int> neighbourhood(const GridShape& grid, int cell, NeighbourhoodKind kind);

}  // namespace cellgan
