// The rank a launcher (mpirun, srun) gave this process, read from the
// environment, so it is known before MPI_Init and in commands that never
// start MPI: an error every rank meets alike (a bad flag) is then printed by
// rank 0 alone, once, instead of once per rank, interleaved.
//
// Thread-safety: reads the environment; call it before starting threads
// that change it.
#pragma once

#include <string>
#include <vector>

namespace cellgan {

// The first of OMPI_COMM_WORLD_RANK (Open MPI), PMIX_RANK (PMIx),
// PMI_RANK (MPICH's Hydra) and SLURM_PROCID (srun) that is set to a
// non-negative integer; 0 when none is, as for a process started by hand.
int launch_rank();

// Under `cellgan launch` (launch/launcher.h): rank 0 writes `code` to the
// file CELLGAN_EXIT_FILE names, replacing it, so the launcher learns the
// run's own exit code whatever mpirun exits with. No effect on other ranks
// or without the variable; a failure to write is ignored (the launcher then
// treats the attempt as failed).
void report_exit_code(int code);

// Under `cellgan launch`: true when the launcher that started this job
// (CELLGAN_LAUNCHER_PID, "PID@HOST") ran on this host and is gone (killed),
// so that the job stops with a checkpoint instead of running on with no
// one to watch it. False without the variable or on another host.
bool launcher_gone();

// The lines CELLGAN_LAUNCH_NOTES holds (one per line; none when unset):
// what the launcher asks the master to write to events.log (its restarts).
std::vector<std::string> launch_notes();

}  // namespace cellgan
