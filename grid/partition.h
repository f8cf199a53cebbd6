// Splitting the cells over W workers ("domain decomposition", docs/architecture.md, "Processes and threads"),
// and the halo exchange plan that follows from it.
//
// Workers are numbered 0..W-1 (their rank in the LOCAL communicator; world
// rank = worker + 1). When W = pr * pc with pr <= rows and pc <= cols for
// some factorisation, the grid can be cut into pr x pc rectangular blocks,
// row and column bands as even as possible (the first bands get the extra
// cell). The factorisation whose largest block, ceil(R/pr) * ceil(C/pc), is
// smallest wins, then the most square one, then the one with more rows.
// Worker w has block (w / pc, w % pc); the worker grid is the periodic
// Cartesian grid of the LOCAL communicator. Blocks are used only when their
// largest holds no more than ceil(R*C/W) cells, the largest of W strips: a
// generation lasts as long as the busiest worker. Otherwise (e.g. 2 or 5
// workers on 3x3) the cells are cut, in row-major order, into W contiguous
// strips as even as possible, and the worker grid is W x 1.
//
// Thread-safety: immutable value types and pure functions.
#pragma once

#include <vector>

#include "grid/topology.h"

namespace cellgan {

struct Partition {
  int workers = 0;
  int worker_rows = 0;  // dims of the workers' Cartesian grid
  int worker_cols = 0;
  bool blocks = true;   // false: row-major strips
  std::vector<int> owner;                    // cell id -> worker
  std::vector<std::vector<int>> cells_of;    // worker -> its cell ids, ascending
};

// Throws std::invalid_argument ("partition_cells: workers N ... expected
// 1..R*C") unless 1 <= workers <= grid.cell_count(). The job checks the
// number of worker ranks against the grid first and reports a bad one as
// the user's (InputError), so this is a broken contract.
Partition partition_cells(const GridShape& grid, int workers);

// What one worker exchanges each generation.
struct HaloPlan {
  // For each cell this worker owns that another worker needs: the cell and
  // the workers that need it (ascending, without this worker).
  struct Outgoing {
    int cell = 0;
    std::vector<int> to_workers;
  };
  std::vector<Outgoing> sends;  // ascending by cell
  // Cells owned elsewhere that this worker's cells have in their
  // neighbourhoods (ascending), with their owners.
  std::vector<int> receives;
  std::vector<int> receive_from;  // owner of receives[i]
};

// Throws std::invalid_argument unless `partition` is partition_cells' for
// `grid` and 0 <= worker < partition.workers.
HaloPlan halo_plan(const GridShape& grid, const Partition& partition, NeighbourhoodKind kind, int worker);

}  // namespace cellgan
