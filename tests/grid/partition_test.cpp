// Tests of partition_cells (grid/partition.h): for every swept grid shape and
// every worker count 1..R*C, each cell is owned exactly once, the sizes are
// balanced (no worker busier than the busiest of W even strips), blocks are
// rectangles laid out on the worker grid, and the block-or-strip choice
// follows the stated factorisation rule.
#include "grid/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/grid/grid_reference.h"

namespace cellgan {
namespace {

struct Box {
  int row_begin, row_end, col_begin, col_end;  // half-open
};

// The bounding box of a worker's cells.
Box bounding_box(const GridShape& grid, const std::vector<int>& cells) {
  Box box{grid.rows(), -1, grid.cols(), -1};
  for (int cell : cells) {
    const CellCoord c = grid.coord(cell);
    box.row_begin = std::min(box.row_begin, c.row);
    box.row_end = std::max(box.row_end, c.row + 1);
    box.col_begin = std::min(box.col_begin, c.col);
    box.col_end = std::max(box.col_end, c.col + 1);
  }
  return box;
}

std::string label(int rows, int cols, int workers) {
  return std::to_string(rows) + "x" + std::to_string(cols) + " with " + std::to_string(workers) + " workers";
}

// Calls `check(grid, workers, partition)` for every swept shape and W.
template <typename Check>
void for_every_partition(Check check) {
  for (auto [rows, cols] : test::partition_shapes()) {
    GridShape grid(rows, cols);
    for (int workers = 1; workers <= grid.cell_count(); ++workers) {
      SCOPED_TRACE(label(rows, cols, workers));
      check(grid, workers, partition_cells(grid, workers));
    }
  }
}

TEST(Partition, EveryCellIsOwnedExactlyOnceAndCellsOfMatchesOwner) {
  for_every_partition([](const GridShape& grid, int workers, const Partition& p) {
    EXPECT_EQ(p.workers, workers);
    ASSERT_EQ(p.owner.size(), static_cast<std::size_t>(grid.cell_count()));
    ASSERT_EQ(p.cells_of.size(), static_cast<std::size_t>(workers));
    std::vector<int> times_listed(static_cast<std::size_t>(grid.cell_count()), 0);
    for (int w = 0; w < workers; ++w) {
      const auto& cells = p.cells_of[static_cast<std::size_t>(w)];
      EXPECT_FALSE(cells.empty()) << "worker " << w << " has no cells";
      EXPECT_TRUE(std::is_sorted(cells.begin(), cells.end())) << "worker " << w;
      for (int cell : cells) {
        ASSERT_GE(cell, 0);
        ASSERT_LT(cell, grid.cell_count());
        ++times_listed[static_cast<std::size_t>(cell)];
        EXPECT_EQ(p.owner[static_cast<std::size_t>(cell)], w) << "cell " << cell;
      }
    }
    for (int cell = 0; cell < grid.cell_count(); ++cell) {
      EXPECT_EQ(times_listed[static_cast<std::size_t>(cell)], 1) << "cell " << cell;
    }
  });
}

TEST(Partition, WorkerGridHasWorkersCells) {
  for_every_partition([](const GridShape&, int workers, const Partition& p) {
    EXPECT_EQ(p.worker_rows * p.worker_cols, workers);
    if (!p.blocks) {
      EXPECT_EQ(p.worker_rows, workers);
      EXPECT_EQ(p.worker_cols, 1);
    }
  });
}

TEST(Partition, BlocksIffTheMostEvenFittingFactorisationIsAsEvenAsStrips) {
  for_every_partition([](const GridShape& grid, int workers, const Partition& p) {
    // Reference: of every pr x pc = W that fits, the smallest largest block,
    // then the smallest |pr - pc|, then the most rows.
    bool any_fits = false;
    int best_largest = 0, best_gap = 0, rows_at_best = 0;
    for (int pr = 1; pr <= workers; ++pr) {
      const int pc = workers / pr;
      if (pr * pc != workers || pr > grid.rows() || pc > grid.cols()) continue;
      const int largest = ((grid.rows() + pr - 1) / pr) * ((grid.cols() + pc - 1) / pc);
      const int gap = std::abs(pr - pc);
      if (!any_fits || largest < best_largest || (largest == best_largest && gap <= best_gap)) {
        best_largest = largest;
        best_gap = gap;
        rows_at_best = pr;
      }
      any_fits = true;
    }
    const int largest_strip = (grid.cell_count() + workers - 1) / workers;
    EXPECT_EQ(p.blocks, any_fits && best_largest <= largest_strip);
    if (p.blocks) {
      EXPECT_LE(p.worker_rows, grid.rows());
      EXPECT_LE(p.worker_cols, grid.cols());
      EXPECT_EQ(p.worker_rows, rows_at_best);
    }
  });
}

TEST(Partition, BlocksAreRectanglesOnTheWorkerGrid) {
  for_every_partition([](const GridShape& grid, int, const Partition& p) {
    if (!p.blocks) return;
    std::vector<Box> boxes;
    for (int w = 0; w < p.workers; ++w) {
      const auto& cells = p.cells_of[static_cast<std::size_t>(w)];
      const Box box = bounding_box(grid, cells);
      boxes.push_back(box);
      // A rectangle: its bounding box holds exactly its cells.
      const int area = (box.row_end - box.row_begin) * (box.col_end - box.col_begin);
      EXPECT_EQ(area, static_cast<int>(cells.size())) << "worker " << w;
      for (int r = box.row_begin; r < box.row_end; ++r) {
        for (int c = box.col_begin; c < box.col_end; ++c) {
          EXPECT_EQ(p.owner[static_cast<std::size_t>(grid.id({r, c}))], w) << "(" << r << "," << c << ")";
        }
      }
    }
    // Worker w has block (w / pc, w % pc): blocks in a worker row share
    // their row band, blocks in a worker column share their column band,
    // and bands advance in order.
    for (int w = 0; w < p.workers; ++w) {
      const int br = w / p.worker_cols;
      const int bc = w % p.worker_cols;
      const Box& box = boxes[static_cast<std::size_t>(w)];
      const Box& row_head = boxes[static_cast<std::size_t>(br * p.worker_cols)];
      const Box& col_head = boxes[static_cast<std::size_t>(bc)];
      EXPECT_EQ(box.row_begin, row_head.row_begin) << "worker " << w;
      EXPECT_EQ(box.row_end, row_head.row_end) << "worker " << w;
      EXPECT_EQ(box.col_begin, col_head.col_begin) << "worker " << w;
      EXPECT_EQ(box.col_end, col_head.col_end) << "worker " << w;
      if (br == 0) {
        EXPECT_EQ(box.row_begin, 0);
      }
      if (bc == 0) {
        EXPECT_EQ(box.col_begin, 0);
      }
      if (br > 0) {
        EXPECT_EQ(box.row_begin, boxes[static_cast<std::size_t>(w - p.worker_cols)].row_end);
      }
      if (bc > 0) {
        EXPECT_EQ(box.col_begin, boxes[static_cast<std::size_t>(w - 1)].col_end);
      }
    }
  });
}

TEST(Partition, BandsAreEvenWithTheExtraCellsInTheFirstBands) {
  for_every_partition([](const GridShape& grid, int, const Partition& p) {
    if (!p.blocks) return;
    std::vector<int> heights, widths;
    for (int br = 0; br < p.worker_rows; ++br) {
      const Box box = bounding_box(grid, p.cells_of[static_cast<std::size_t>(br * p.worker_cols)]);
      heights.push_back(box.row_end - box.row_begin);
    }
    for (int bc = 0; bc < p.worker_cols; ++bc) {
      const Box box = bounding_box(grid, p.cells_of[static_cast<std::size_t>(bc)]);
      widths.push_back(box.col_end - box.col_begin);
    }
    for (const auto* bands : {&heights, &widths}) {
      const auto [lo, hi] = std::minmax_element(bands->begin(), bands->end());
      EXPECT_LE(*hi - *lo, 1);
      EXPECT_TRUE(std::is_sorted(bands->rbegin(), bands->rend())) << "longer bands come first";
    }
  });
}

TEST(Partition, SizesAreBalanced) {
  for_every_partition([](const GridShape& grid, int, const Partition& p) {
    std::vector<int> sizes;
    for (const auto& cells : p.cells_of) sizes.push_back(static_cast<int>(cells.size()));
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    // No worker holds more cells than the busiest of W even strips would.
    EXPECT_LE(*hi, (grid.cell_count() + p.workers - 1) / p.workers);
    if (p.blocks) {
      // Bands differ by at most one row (column), so blocks differ by at
      // most ceil(R/pr)*ceil(C/pc) - floor(R/pr)*floor(C/pc) cells.
      const int rows_lo = grid.rows() / p.worker_rows;
      const int cols_lo = grid.cols() / p.worker_cols;
      const int rows_hi = rows_lo + (grid.rows() % p.worker_rows != 0 ? 1 : 0);
      const int cols_hi = cols_lo + (grid.cols() % p.worker_cols != 0 ? 1 : 0);
      EXPECT_LE(*hi - *lo, rows_hi * cols_hi - rows_lo * cols_lo);
      EXPECT_GE(*lo, rows_lo * cols_lo);
      EXPECT_LE(*hi, rows_hi * cols_hi);
    } else {
      EXPECT_LE(*hi - *lo, 1);
      EXPECT_TRUE(std::is_sorted(sizes.rbegin(), sizes.rend())) << "longer strips come first";
    }
  });
}

TEST(Partition, StripsAreContiguousInRowMajorOrder) {
  for_every_partition([](const GridShape&, int, const Partition& p) {
    if (p.blocks) return;
    int next = 0;
    for (const auto& cells : p.cells_of) {
      for (int cell : cells) EXPECT_EQ(cell, next++);
    }
  });
}

TEST(Partition, FiveWorkersOnThreeByThreeFallBackToStrips) {
  const Partition p = partition_cells(GridShape(3, 3), 5);
  EXPECT_FALSE(p.blocks);
  EXPECT_EQ(p.worker_rows, 5);
  EXPECT_EQ(p.worker_cols, 1);
  // 9 cells over 5 strips: 2, 2, 2, 2, 1.
  EXPECT_EQ(p.cells_of[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(p.cells_of[4], (std::vector<int>{8}));
}

TEST(Partition, TwoWorkersOnThreeByThreeGetFiveAndFourCellsNotSixAndThree) {
  // Blocks would be 2 rows + 1 row (6 and 3 cells): strips are more even.
  const Partition p = partition_cells(GridShape(3, 3), 2);
  EXPECT_FALSE(p.blocks);
  EXPECT_EQ(p.cells_of[0], (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(p.cells_of[1], (std::vector<int>{5, 6, 7, 8}));
}

TEST(Partition, TheMostEvenFactorisationBeatsTheMostSquareOne) {
  // 3x4 with 4 workers: 2x2 blocks would hold 4, 4, 2 and 2 cells; 1x4
  // column blocks hold 3 each.
  const Partition p = partition_cells(GridShape(3, 4), 4);
  EXPECT_TRUE(p.blocks);
  EXPECT_EQ(p.worker_rows, 1);
  EXPECT_EQ(p.worker_cols, 4);
  EXPECT_EQ(p.cells_of[0], (std::vector<int>{0, 4, 8}));
  // 3x3 with 3 workers: three row bands of 3 cells.
  const Partition rows = partition_cells(GridShape(3, 3), 3);
  EXPECT_TRUE(rows.blocks);
  EXPECT_EQ(rows.worker_rows, 3);
  EXPECT_EQ(rows.worker_cols, 1);
}

TEST(Partition, TwoWorkersTieGoesToMoreRows) {
  const Partition p = partition_cells(GridShape(4, 4), 2);
  EXPECT_TRUE(p.blocks);
  EXPECT_EQ(p.worker_rows, 2);
  EXPECT_EQ(p.worker_cols, 1);
  // A one-row grid cannot take two worker rows, so 1x2 is used.
  const Partition flat = partition_cells(GridShape(1, 4), 2);
  EXPECT_TRUE(flat.blocks);
  EXPECT_EQ(flat.worker_rows, 1);
  EXPECT_EQ(flat.worker_cols, 2);
}

// The job checks the worker ranks against the grid first (InputError);
// here a bad count is a broken contract.
TEST(Partition, RejectsWorkerCountsOutsideOneToCellCount) {
  for (auto [rows, cols] : test::partition_shapes()) {
    GridShape grid(rows, cols);
    for (int workers : {0, -1, grid.cell_count() + 1, grid.cell_count() * 3}) {
      SCOPED_TRACE(label(rows, cols, workers));
      try {
        partition_cells(grid, workers);
        ADD_FAILURE() << "accepted";
      } catch (const std::invalid_argument& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("workers " + std::to_string(workers)), std::string::npos) << message;
        EXPECT_NE(message.find("1.." + std::to_string(grid.cell_count())), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      }
    }
  }
}

}  // namespace
}  // namespace cellgan
