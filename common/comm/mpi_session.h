// MPI's lifetime (RAII) and the communicators of a cellgan job (SPEC §2).
//
// MpiSession calls MPI_Init_thread (asking for MPI_THREAD_MULTIPLE; at
// least SERIALIZED is required, since the thread that owns MPI is not
// always the main thread) and MPI_Finalize in its destructor. <mpi.h> is
// not included here.
//
// The three communicators:
// - WORLD:  every rank; configuration and control.
// - GLOBAL: the master (rank 0) and the active workers, made with
//   MPI_Comm_create_group by its members only; for gathers.
// - LOCAL:  the active workers only, as a periodic Cartesian communicator
//   (MPI_Cart_create, no reordering, so LOCAL rank = world rank - 1 for a
//   full set of workers); for the neighbour exchange.
//
// Thread-safety: construct and destroy on the main thread; the
// communicators it makes belong to the thread that owns MPI.
#pragma once

#include <memory>
#include <vector>

#include "common/comm/communicator.h"

namespace cellgan {

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }

  std::unique_ptr<Communicator> world() const;

  // Called by exactly the ranks in `world_ranks` (ascending); the new
  // communicator's ranks follow that order. Uses MPI_Comm_create_group.
  std::unique_ptr<Communicator> create_group(const std::vector<int>& world_ranks, int tag) const;

  // Called by exactly the ranks in `worker_world_ranks` (ascending): a
  // periodic dims[0] x dims[1] Cartesian communicator over them.
  std::unique_ptr<Communicator> create_cartesian(const std::vector<int>& worker_world_ranks, int rows,
                                                 int cols, int tag) const;

  // Ends every rank of the job at once (MPI_Abort).
  [[noreturn]] void abort(int code) const;

 private:
  int world_rank_ = 0;
  int world_size_ = 1;
};

}  // namespace cellgan
