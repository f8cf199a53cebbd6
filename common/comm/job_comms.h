// The communicators of a cellgan job (docs/architecture.md, "Processes and threads") and the factory that makes
// them, so that a Master and its Workers run the same code over MPI
// (MpiSession, one process per rank) and over the in-process network
// (InProcessJob, one thread per rank, for tests).
//
// The three communicators:
// - world:  every rank; start-up, heartbeats both ways, records, errors.
// - global: the master (rank 0) and the active workers, made with
//           group(); results and the workers' hello at start-up.
// - local:  the active workers only, as a periodic Cartesian communicator
//           (no reordering: local rank = world rank - 1 for a full set of
//           workers); the layout's exchange between workers. Null on the
//           master.
//
// group() and cartesian() are collective over their members (only the
// members call them) and have no deadline: callers enter them only after
// every member has shown it is alive (the start message has been sent or
// received).
//
// Thread-safety: a factory is used by one thread of its rank (the thread
// that owns communication there); the communicators it makes belong to it.
#pragma once

#include <memory>
#include <vector>

#include "common/comm/communicator.h"

namespace cellgan {

struct JobComms {
  std::unique_ptr<Communicator> world;
  std::unique_ptr<Communicator> global;
  std::unique_ptr<Communicator> local;  // null on the master
};

class JobCommsFactory {
 public:
  virtual ~JobCommsFactory() = default;

  // This rank in WORLD and the number of ranks (the master is rank 0).
  virtual int world_rank() const = 0;
  virtual int world_size() const = 0;

  // This rank's WORLD communicator.
  virtual std::unique_ptr<Communicator> world() = 0;

  // Whether the ranks that remain can go on when one is lost: under
  // `mpirun --enable-recovery` and in one process; not under plain mpirun
  // or srun, which end every rank when one dies (docs/operations.md).
  virtual bool survives_rank_loss() const = 0;

  // Called by exactly the ranks in `world_ranks` (strictly ascending); the
  // new communicator's ranks follow that order. `tag` tells concurrent
  // creations apart.
  virtual std::unique_ptr<Communicator> group(const std::vector<int>& world_ranks, int tag) = 0;

  // Called by exactly the ranks in `world_ranks` (ascending): a periodic
  // rows x cols Cartesian communicator over them, ranks in that order.
  virtual std::unique_ptr<Communicator> cartesian(const std::vector<int>& world_ranks, int rows, int cols,
                                                  int tag) = 0;
};

}  // namespace cellgan
