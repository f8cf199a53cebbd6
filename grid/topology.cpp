// The cell grid: shape checks, toroidal wrapping and the von Neumann / Moore
// neighbourhoods, in the fixed order stated in grid/topology.h.
//
// The arguments come from a validated configuration (grid.rows and
// grid.cols are checked in common/config.cpp), so a bad one is a broken
// contract: std::invalid_argument, not InputError.
//
// Thread-safety: pure functions over immutable values; safe from any thread.
#include "grid/topology.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace cellgan {
namespace {

struct Offset {
  int d_row;
  int d_col;
};

// Offsets in neighbourhood order; the first kVonNeumannCount are von Neumann.
constexpr Offset kOffsets[] = {
    {0, 0},            // self
    {-1, 0}, {1, 0},   // north, south
    {0, -1}, {0, 1},   // west, east
    {-1, -1}, {-1, 1}, // north-west, north-east
    {1, -1}, {1, 1},   // south-west, south-east
};
constexpr int kVonNeumannCount = 5;
constexpr int kMooreCount = 9;

int offset_count(NeighbourhoodKind kind) {
  switch (kind) {
    case NeighbourhoodKind::kVonNeumann: return kVonNeumannCount;
    case NeighbourhoodKind::kMoore: return kMooreCount;
  }
  throw std::invalid_argument("neighbourhood: unknown NeighbourhoodKind " + std::to_string(static_cast<int>(kind)) +
                              ": expected von Neumann or Moore");
}

// Non-negative remainder: wraps any integer into 0..n-1.
int wrap(int value, int n) {
  const int r = value % n;
  return r < 0 ? r + n : r;
}

}  // namespace

GridShape::GridShape(int rows, int cols) : rows_(rows), cols_(cols) {
  if (rows < 1) {
    throw std::invalid_argument("GridShape: rows " + std::to_string(rows) + " is not a grid size: expected >= 1");
  }
  if (cols < 1) {
    throw std::invalid_argument("GridShape: cols " + std::to_string(cols) + " is not a grid size: expected >= 1");
  }
  if (rows > INT_MAX / cols) {
    throw std::invalid_argument("GridShape: " + std::to_string(rows) + "x" + std::to_string(cols) +
                                " has too many cells: expected rows*cols <= " + std::to_string(INT_MAX));
  }
}

int GridShape::wrapped_id(int row, int col) const { return id({wrap(row, rows_), wrap(col, cols_)}); }

std::vector<int> neighbourhood(const GridShape& grid, int cell, NeighbourhoodKind kind) {
  if (cell < 0 || cell >= grid.cell_count()) {
    throw std::invalid_argument("neighbourhood: cell " + std::to_string(cell) + " is outside a " +
                                std::to_string(grid.rows()) + "x" + std::to_string(grid.cols()) +
                                " grid: expected 0.." + std::to_string(grid.cell_count() - 1));
  }
  const int count = offset_count(kind);
  const CellCoord centre = grid.coord(cell);
  std::vector<int> cells;
  cells.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const int id = grid.wrapped_id(centre.row + kOffsets[i].d_row, centre.col + kOffsets[i].d_col);
    // At most 9 entries: a linear scan keeps the first occurrence cheaply.
    if (std::find(cells.begin(), cells.end(), id) == cells.end()) cells.push_back(id);
  }
  return cells;
}

}  // namespace cellgan
