// Tests of grid/topology.h: grid shape, cell ids, wrapping, and the von
// Neumann / Moore neighbourhoods of every cell, checked against a
// brute-force reference (tests/grid/grid_reference.h).
#include "grid/topology.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/grid/grid_reference.h"

namespace cellgan {
namespace {

using test::kBothKinds;
using test::reference_neighbourhood;

const std::vector<std::pair<int, int>> kShapes = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {3, 5}, {5, 3}, {1, 4}};

std::string kind_name(NeighbourhoodKind kind) {
  return kind == NeighbourhoodKind::kVonNeumann ? "von_neumann" : "moore";
}

// The configuration checks grid.rows and grid.cols (InputError); a bad
// shape reaching GridShape is a broken contract.
TEST(GridShape, RejectsEmptyShapesAsABrokenContractNamingTheSide) {
  for (auto [rows, cols] : std::vector<std::pair<int, int>>{{0, 3}, {-1, 2}, {3, 0}, {2, -4}}) {
    try {
      GridShape grid(rows, cols);
      FAIL() << rows << "x" << cols << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      const std::string key = rows < 1 ? "rows" : "cols";
      EXPECT_NE(message.find(key), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(GridShape, RejectsShapesWhoseCellCountOverflows) {
  EXPECT_THROW(GridShape(1 << 16, 1 << 16), std::invalid_argument);
}

TEST(GridShape, IdsAreRowMajorAndCoordRoundTrips) {
  for (auto [rows, cols] : kShapes) {
    GridShape grid(rows, cols);
    EXPECT_EQ(grid.cell_count(), rows * cols);
    int expected_id = 0;
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        EXPECT_EQ(grid.id({r, c}), expected_id);
        EXPECT_EQ(grid.coord(expected_id), (CellCoord{r, c}));
        ++expected_id;
      }
    }
  }
}

TEST(GridShape, WrappedIdWrapsBothAxesInBothDirections) {
  GridShape grid(3, 5);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 5; ++c) {
      const int id = grid.id({r, c});
      EXPECT_EQ(grid.wrapped_id(r, c), id);
      EXPECT_EQ(grid.wrapped_id(r + 3, c), id);
      EXPECT_EQ(grid.wrapped_id(r - 3, c), id);
      EXPECT_EQ(grid.wrapped_id(r, c + 5), id);
      EXPECT_EQ(grid.wrapped_id(r, c - 5), id);
      EXPECT_EQ(grid.wrapped_id(r - 6, c + 10), id);
    }
  }
  EXPECT_EQ(grid.wrapped_id(-1, 0), grid.id({2, 0}));
  EXPECT_EQ(grid.wrapped_id(0, -1), grid.id({0, 4}));
  EXPECT_EQ(grid.wrapped_id(3, 5), grid.id({0, 0}));
}

TEST(Neighbourhood, EveryCellMatchesTheBruteForceReference) {
  for (auto [rows, cols] : kShapes) {
    GridShape grid(rows, cols);
    for (NeighbourhoodKind kind : kBothKinds) {
      for (int cell = 0; cell < grid.cell_count(); ++cell) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " " + kind_name(kind) + " cell " +
                     std::to_string(cell));
        const std::vector<int> got = neighbourhood(grid, cell, kind);
        const std::set<int> got_set(got.begin(), got.end());
        ASSERT_FALSE(got.empty());
        EXPECT_EQ(got.front(), cell) << "centre must come first";
        EXPECT_EQ(got_set.size(), got.size()) << "no duplicates";
        EXPECT_EQ(got_set, reference_neighbourhood(grid, cell, kind));
      }
    }
  }
}

TEST(Neighbourhood, SizesAreFiveAndNineOnLargeGridsAndSmallerOnSmallOnes) {
  for (auto [rows, cols] : kShapes) {
    GridShape grid(rows, cols);
    // Distinct positions within ring distance 1 on each axis.
    const int reach_rows = rows >= 3 ? 3 : rows;
    const int reach_cols = cols >= 3 ? 3 : cols;
    const std::size_t von_neumann = static_cast<std::size_t>(1 + (reach_rows - 1) + (reach_cols - 1));
    const std::size_t moore = static_cast<std::size_t>(reach_rows * reach_cols);
    for (int cell = 0; cell < grid.cell_count(); ++cell) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " cell " + std::to_string(cell));
      const std::size_t vn_size = neighbourhood(grid, cell, NeighbourhoodKind::kVonNeumann).size();
      const std::size_t moore_size = neighbourhood(grid, cell, NeighbourhoodKind::kMoore).size();
      EXPECT_EQ(vn_size, von_neumann);
      EXPECT_EQ(moore_size, moore);
      if (rows >= 3 && cols >= 3) {
        EXPECT_EQ(vn_size, 5u);
        EXPECT_EQ(moore_size, 9u);
      } else {
        EXPECT_LT(vn_size, 5u);
        EXPECT_LT(moore_size, 9u);
      }
    }
  }
}

TEST(Neighbourhood, SmallGridsHaveTheExpectedMembers) {
  // 1x1: only the cell itself.
  EXPECT_EQ(neighbourhood(GridShape(1, 1), 0, NeighbourhoodKind::kMoore), (std::vector<int>{0}));
  // 2x2, cell 0: north and south are both cell 2, west and east both cell 1.
  EXPECT_EQ(neighbourhood(GridShape(2, 2), 0, NeighbourhoodKind::kVonNeumann), (std::vector<int>{0, 2, 1}));
  // 2x2 Moore adds the diagonal, cell 3.
  EXPECT_EQ(neighbourhood(GridShape(2, 2), 0, NeighbourhoodKind::kMoore), (std::vector<int>{0, 2, 1, 3}));
  // 1x4, cell 1: no other row, so only west (0) and east (2).
  EXPECT_EQ(neighbourhood(GridShape(1, 4), 1, NeighbourhoodKind::kVonNeumann), (std::vector<int>{1, 0, 2}));
}

TEST(Neighbourhood, OrderIsSelfNorthSouthWestEastThenDiagonals) {
  // 3x5, cell (1,2) = 7: every neighbour is distinct and inside the grid.
  GridShape grid(3, 5);
  EXPECT_EQ(neighbourhood(grid, 7, NeighbourhoodKind::kVonNeumann), (std::vector<int>{7, 2, 12, 6, 8}));
  EXPECT_EQ(neighbourhood(grid, 7, NeighbourhoodKind::kMoore),
            (std::vector<int>{7, 2, 12, 6, 8, 1, 3, 11, 13}));
  // Corner (0,0) = 0 wraps: north is (2,0), west is (0,4).
  EXPECT_EQ(neighbourhood(grid, 0, NeighbourhoodKind::kMoore),
            (std::vector<int>{0, 10, 5, 4, 1, 14, 11, 9, 6}));
}

TEST(Neighbourhood, RejectsCellsOutsideTheGrid) {
  GridShape grid(2, 3);
  EXPECT_THROW(neighbourhood(grid, -1, NeighbourhoodKind::kVonNeumann), std::invalid_argument);
  EXPECT_THROW(neighbourhood(grid, 6, NeighbourhoodKind::kMoore), std::invalid_argument);
}

// Lipizzaner indexes its neighbourhood mask as [x][y] and its node matrix
// as [y][x], so on non-square grids an off-diagonal cell gets its mirror
// cell's neighbours. Ours must be the cell's own: (row±1, col), (row, col±1).
TEST(Neighbourhood, LipizzanerTranspositionBugIsAbsentOnNonSquareGrids) {
  int mirrored = 0;
  for (auto [rows, cols] : std::vector<std::pair<int, int>>{{3, 5}, {5, 3}}) {
    GridShape grid(rows, cols);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        if (r == c) continue;
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " cell (" + std::to_string(r) + "," +
                     std::to_string(c) + ")");
        const std::vector<int> got = neighbourhood(grid, grid.id({r, c}), NeighbourhoodKind::kVonNeumann);
        ASSERT_EQ(got.size(), 5u);
        // Position by position, in (row, col) coordinates.
        const CellCoord north = grid.coord(got[1]);
        const CellCoord south = grid.coord(got[2]);
        const CellCoord west = grid.coord(got[3]);
        const CellCoord east = grid.coord(got[4]);
        EXPECT_EQ(north, (CellCoord{(r + rows - 1) % rows, c}));
        EXPECT_EQ(south, (CellCoord{(r + 1) % rows, c}));
        EXPECT_EQ(west, (CellCoord{r, (c + cols - 1) % cols}));
        EXPECT_EQ(east, (CellCoord{r, (c + 1) % cols}));
        // Where the mirror cell (c, r) exists, its neighbourhood (what
        // Lipizzaner would hand this cell) is not ours.
        if (c < rows && r < cols) {
          const std::set<int> mine(got.begin(), got.end());
          EXPECT_NE(mine, test::reference_neighbourhood(grid, grid.id({c, r}), NeighbourhoodKind::kVonNeumann));
          ++mirrored;
        }
      }
    }
  }
  EXPECT_EQ(mirrored, 12);  // (0,1) (0,2) (1,0) (1,2) (2,0) (2,1) on each shape
}

}  // namespace
}  // namespace cellgan
