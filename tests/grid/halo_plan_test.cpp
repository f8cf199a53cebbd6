// Tests of halo_plan (grid/partition.h): for every swept grid shape, worker
// count and neighbourhood kind, what the workers send is exactly what the
// others receive, nobody sends to itself, and every neighbourhood member of
// every owned cell is either owned or received.
#include "grid/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tests/grid/grid_reference.h"

namespace cellgan {
namespace {

// (sender, receiver, cell)
using Transfer = std::tuple<int, int, int>;

std::string label(const GridShape& grid, int workers, NeighbourhoodKind kind) {
  return std::to_string(grid.rows()) + "x" + std::to_string(grid.cols()) + " with " + std::to_string(workers) +
         " workers, " + (kind == NeighbourhoodKind::kVonNeumann ? "von_neumann" : "moore");
}

// Calls `check(grid, kind, partition, plans)` for every swept shape, W and
// kind, with the plans of all W workers.
template <typename Check>
void for_every_plan(Check check) {
  for (auto [rows, cols] : test::partition_shapes()) {
    GridShape grid(rows, cols);
    for (int workers = 1; workers <= grid.cell_count(); ++workers) {
      const Partition p = partition_cells(grid, workers);
      for (NeighbourhoodKind kind : test::kBothKinds) {
        SCOPED_TRACE(label(grid, workers, kind));
        std::vector<HaloPlan> plans;
        for (int w = 0; w < workers; ++w) plans.push_back(halo_plan(grid, p, kind, w));
        check(grid, kind, p, plans);
      }
    }
  }
}

int owner_of(const Partition& p, int cell) { return p.owner[static_cast<std::size_t>(cell)]; }

TEST(HaloPlan, WhatIsSentIsExactlyWhatIsReceived) {
  for_every_plan([](const GridShape&, NeighbourhoodKind, const Partition& p, const std::vector<HaloPlan>& plans) {
    std::set<Transfer> sent, received;
    for (int w = 0; w < p.workers; ++w) {
      const HaloPlan& plan = plans[static_cast<std::size_t>(w)];
      for (const auto& out : plan.sends) {
        for (int to : out.to_workers) EXPECT_TRUE(sent.insert({w, to, out.cell}).second);
      }
      for (std::size_t i = 0; i < plan.receives.size(); ++i) {
        EXPECT_TRUE(received.insert({plan.receive_from[i], w, plan.receives[i]}).second);
      }
    }
    EXPECT_EQ(sent, received);
    if (p.workers > 1) {
      EXPECT_FALSE(sent.empty()) << "a torus split in two or more always exchanges";
    }
  });
}

TEST(HaloPlan, NoWorkerSendsToItselfAndListsAreOrdered) {
  for_every_plan([](const GridShape&, NeighbourhoodKind, const Partition& p, const std::vector<HaloPlan>& plans) {
    for (int w = 0; w < p.workers; ++w) {
      const HaloPlan& plan = plans[static_cast<std::size_t>(w)];
      for (std::size_t i = 0; i < plan.sends.size(); ++i) {
        const auto& out = plan.sends[i];
        EXPECT_EQ(owner_of(p, out.cell), w) << "worker " << w << " sends cell " << out.cell << " it does not own";
        EXPECT_FALSE(out.to_workers.empty());
        EXPECT_EQ(std::count(out.to_workers.begin(), out.to_workers.end(), w), 0) << "worker " << w;
        EXPECT_TRUE(std::adjacent_find(out.to_workers.begin(), out.to_workers.end(),
                                       [](int a, int b) { return a >= b; }) == out.to_workers.end())
            << "to_workers must be strictly ascending";
        if (i > 0) {
          EXPECT_LT(plan.sends[i - 1].cell, out.cell);
        }
      }
      ASSERT_EQ(plan.receives.size(), plan.receive_from.size());
      for (std::size_t i = 0; i < plan.receives.size(); ++i) {
        EXPECT_NE(plan.receive_from[i], w);
        EXPECT_EQ(plan.receive_from[i], owner_of(p, plan.receives[i]));
        if (i > 0) {
          EXPECT_LT(plan.receives[i - 1], plan.receives[i]);
        }
      }
    }
  });
}

TEST(HaloPlan, EveryNeighbourOfAnOwnedCellIsOwnedOrReceived) {
  for_every_plan([](const GridShape& grid, NeighbourhoodKind kind, const Partition& p,
                    const std::vector<HaloPlan>& plans) {
    for (int w = 0; w < p.workers; ++w) {
      const HaloPlan& plan = plans[static_cast<std::size_t>(w)];
      const std::set<int> received(plan.receives.begin(), plan.receives.end());
      for (int cell : p.cells_of[static_cast<std::size_t>(w)]) {
        for (int member : test::reference_neighbourhood(grid, cell, kind)) {
          const bool available = owner_of(p, member) == w || received.count(member) == 1;
          EXPECT_TRUE(available) << "worker " << w << " cell " << cell << " lacks neighbour " << member;
        }
      }
    }
  });
}

TEST(HaloPlan, NothingIsReceivedThatNoOwnedCellNeeds) {
  for_every_plan([](const GridShape& grid, NeighbourhoodKind kind, const Partition& p,
                    const std::vector<HaloPlan>& plans) {
    for (int w = 0; w < p.workers; ++w) {
      std::set<int> needed;
      for (int cell : p.cells_of[static_cast<std::size_t>(w)]) {
        for (int member : test::reference_neighbourhood(grid, cell, kind)) {
          if (owner_of(p, member) != w) needed.insert(member);
        }
      }
      const HaloPlan& plan = plans[static_cast<std::size_t>(w)];
      EXPECT_EQ(std::set<int>(plan.receives.begin(), plan.receives.end()), needed) << "worker " << w;
    }
  });
}

TEST(HaloPlan, OneWorkerExchangesNothing) {
  for (auto [rows, cols] : test::partition_shapes()) {
    GridShape grid(rows, cols);
    const Partition p = partition_cells(grid, 1);
    for (NeighbourhoodKind kind : test::kBothKinds) {
      const HaloPlan plan = halo_plan(grid, p, kind, 0);
      EXPECT_TRUE(plan.sends.empty());
      EXPECT_TRUE(plan.receives.empty());
      EXPECT_TRUE(plan.receive_from.empty());
    }
  }
}

TEST(HaloPlan, TwoByTwoBlocksOnFourByFourExchangeTheirBorders) {
  // Worker 0 owns rows 0-1, cols 0-1. Von Neumann on the torus, it needs
  // row 3 (north wrap) and row 2 (south) of cols 0-1, and col 3 (west wrap)
  // and col 2 (east) of rows 0-1.
  GridShape grid(4, 4);
  const Partition p = partition_cells(grid, 4);
  const HaloPlan plan = halo_plan(grid, p, NeighbourhoodKind::kVonNeumann, 0);
  EXPECT_EQ(plan.receives, (std::vector<int>{2, 3, 6, 7, 8, 9, 12, 13}));
  EXPECT_EQ(plan.receive_from, (std::vector<int>{1, 1, 1, 1, 2, 2, 2, 2}));
  // Each of its four cells is needed by exactly its two block neighbours.
  ASSERT_EQ(plan.sends.size(), 4u);
  for (const auto& out : plan.sends) EXPECT_EQ(out.to_workers, (std::vector<int>{1, 2})) << out.cell;
}

TEST(HaloPlan, RejectsWorkersOutsideThePartition) {
  GridShape grid(3, 3);
  const Partition p = partition_cells(grid, 3);
  for (int worker : {-1, 3}) {
    try {
      halo_plan(grid, p, NeighbourhoodKind::kVonNeumann, worker);
      ADD_FAILURE() << "worker " << worker << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("worker " + std::to_string(worker)), std::string::npos) << e.what();
    }
  }
}

TEST(HaloPlan, RejectsAPartitionOfAnotherGrid) {
  const Partition p = partition_cells(GridShape(2, 2), 2);
  EXPECT_THROW(halo_plan(GridShape(3, 3), p, NeighbourhoodKind::kMoore, 0), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
