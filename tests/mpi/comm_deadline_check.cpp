// comm_deadline_check: a communicator created with a member that never
// comes. Run as `mpirun -np 3 comm_deadline_check` by
// comm_creation_deadline.sh: ranks 0 and 1 create a group of {0, 1, 2};
// rank 2 never joins it (as a rank stopped or lost at that moment). The
// creation has no deadline in MPI; cellgan's (mpi_session.h) must end ranks
// 0 and 1 with exit 75 and a line naming the call, about 10 s later.
//
// Thread-safety: single-threaded; the main thread owns MPI.
#include <chrono>
#include <cstdio>
#include <thread>

#include "common/comm/mpi_session.h"

int main(int argc, char** argv) {
  cellgan::MpiSession session(&argc, &argv);
  if (session.world_rank() == 2) {
    std::this_thread::sleep_for(std::chrono::seconds(120));  // never joins; mpirun ends it
    return 0;
  }
  session.group({0, 1, 2}, 7);
  std::fprintf(stderr, "FAIL: rank %d created a group whose member never came\n", session.world_rank());
  return 1;
}
