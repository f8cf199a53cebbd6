// The in-process JobCommsFactory (job_comms.h): the ranks of one job are
// threads of one process, and their communicators are in-process ones
// (in_process_communicator.h). A whole job — a master and its workers —
// then runs inside one test, with no mpirun.
//
// group() and cartesian() behave as under MPI: they are collective (each
// member waits until every member has called them, at most a minute, then
// throws std::runtime_error: the test fails, where an MPI job would end
// the rank with exit 75, mpi_session.h), every member passes the same ranks and tag, and each
// gets its own rank in the new communicator (its index in `world_ranks`). The n-th creation of a given
// (ranks, tag) by a member joins the n-th creation by the others, so a job
// may rebuild a communicator over the same ranks.
//
// Thread-safety: InProcessJob is thread-safe; each factory it hands out
// belongs to the thread of its rank.
#pragma once

#include <memory>

#include "common/comm/job_comms.h"

namespace cellgan {

class InProcessJob {
 public:
  explicit InProcessJob(int ranks);
  ~InProcessJob();
  int size() const;
  // The factory of world rank `rank`; call once per rank.
  std::unique_ptr<JobCommsFactory> factory(int rank);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace cellgan
