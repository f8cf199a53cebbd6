// A worker rank of a coevolution run (SPEC §2): receives the configuration
// from the master, joins GLOBAL and LOCAL, trains its block of cells on
// the training thread (the caller's) while a communication thread owns
// MPI, and hands its cells' ensembles to the master at the end.
//
// Thread-safety: call once, from the main thread, after MPI has started.
#pragma once

#include "common/comm/mpi_session.h"

namespace cellgan {

// Returns the process exit code.
int run_worker(MpiSession& session);

}  // namespace cellgan
