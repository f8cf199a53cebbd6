// Test support for the grid tests: the grid shapes they sweep and an
// independent, brute-force reference for neighbourhood membership.
//
// The reference does not use offsets or wrapping arithmetic: it looks at
// every cell of the grid and keeps those whose toroidal row and column
// distances qualify, so it shares no logic with grid/topology.cpp.
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "grid/topology.h"

namespace cellgan::test {

// Shortest distance between two positions on a ring of length n.
inline int ring_distance(int a, int b, int n) {
  const int d = std::abs(a - b);
  return std::min(d, n - d);
}

// All cells within neighbourhood reach of `cell`, found by brute force.
inline std::set<int> reference_neighbourhood(const GridShape& grid, int cell, NeighbourhoodKind kind) {
  const CellCoord centre = grid.coord(cell);
  std::set<int> cells;
  for (int r = 0; r < grid.rows(); ++r) {
    for (int c = 0; c < grid.cols(); ++c) {
      const int dr = ring_distance(r, centre.row, grid.rows());
      const int dc = ring_distance(c, centre.col, grid.cols());
      const bool in = kind == NeighbourhoodKind::kVonNeumann ? dr + dc <= 1 : (dr <= 1 && dc <= 1);
      if (in) cells.insert(r * grid.cols() + c);
    }
  }
  return cells;
}

// Grid shapes (rows, cols) for the partition and halo sweeps: every shape
// from 1x1 to 4x4, plus the non-square 3x5 and 5x3.
inline std::vector<std::pair<int, int>> partition_shapes() {
  std::vector<std::pair<int, int>> shapes;
  for (int r = 1; r <= 4; ++r) {
    for (int c = 1; c <= 4; ++c) shapes.emplace_back(r, c);
  }
  shapes.emplace_back(3, 5);
  shapes.emplace_back(5, 3);
  return shapes;
}

inline const NeighbourhoodKind kBothKinds[] = {NeighbourhoodKind::kVonNeumann, NeighbourhoodKind::kMoore};

}  // namespace cellgan::test
