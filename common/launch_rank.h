// The rank a launcher (mpirun, srun) gave this process, read from the
// environment, so it is known before MPI_Init and in commands that never
// start MPI: an error every rank meets alike (a bad flag) is then printed by
// rank 0 alone, once, instead of once per rank, interleaved.
//
// Thread-safety: reads the environment; call it before starting threads
// that change it.
#pragma once

namespace cellgan {

// The first of OMPI_COMM_WORLD_RANK (Open MPI), PMIX_RANK (PMIx),
// PMI_RANK (MPICH's Hydra) and SLURM_PROCID (srun) that is set to a
// non-negative integer; 0 when none is, as for a process started by hand.
int launch_rank();

}  // namespace cellgan
