// MPI's lifetime (RAII) and the communicators of a cellgan job (docs/architecture.md, "Processes and threads").
//
// MpiSession calls MPI_Init_thread (asking for MPI_THREAD_MULTIPLE; at
// least SERIALIZED is required, since the thread that owns MPI is not
// always the main thread) and MPI_Finalize in its destructor. <mpi.h> is
// not included here. MPI_Init, and the collective creation of a
// communicator (group(), cartesian()), wait for every member, even a lost
// one: if one has not returned after 30 s (MPI_Init) or 10 s (a
// communicator), the process says which, reports
// exit 75 (common/launch_rank.h) and exits with it (run the same command
// again with --resume auto; cellgan launch does), so a rank lost at launch
// or during a rehoming never hangs a job.
//
// It is the MPI JobCommsFactory (job_comms.h): group() uses
// MPI_Comm_create_group, called by the members only; cartesian() adds
// MPI_Cart_create (periodic, no reordering) over such a group.
//
// Thread-safety: construct and destroy on the main thread; the
// communicators it makes belong to the thread that owns MPI.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "common/comm/job_comms.h"

namespace cellgan {

class MpiSession final : public JobCommsFactory {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int world_rank() const override { return world_rank_; }
  int world_size() const override { return world_size_; }

  std::unique_ptr<Communicator> world() override;
  // True under `mpirun --enable-recovery` (OMPI_MCA_orte_enable_recovery=1).
  bool survives_rank_loss() const override;
  std::unique_ptr<Communicator> group(const std::vector<int>& world_ranks, int tag) override;
  std::unique_ptr<Communicator> cartesian(const std::vector<int>& world_ranks, int rows, int cols,
                                          int tag) override;

  // Ends every rank of the job at once (MPI_Abort).
  [[noreturn]] void abort(int code) const;
  // Finalizes MPI now; if MPI_Finalize has not returned within `limit`
  // (a lost peer under --enable-recovery can keep it waiting), calls
  // `before_exit` (if any) and exits with `exit_code` anyway: its work is
  // done and written.
  void finalize_within(std::chrono::milliseconds limit, int exit_code,
                       std::function<void()> before_exit = nullptr);

 private:
  int world_rank_ = 0;
  int world_size_ = 1;
};

}  // namespace cellgan
