// The command line that starts a job: how many ranks, under which starter
// (mpirun on one machine, srun inside a SLURM allocation), with which
// options for `cellgan train`.
//
// Thread-safety: pure functions, except cores_seen() and
// choose_starter(), which read the process's affinity and environment.
#pragma once

#include <string>
#include <vector>

#include "common/config.h"

namespace cellgan::launch {

enum class Starter { kMpirun, kSrun };

struct JobOptions {
  std::string cellgan;                  // the cellgan executable
  std::string config;                   // the configuration file
  std::vector<std::string> train_args;  // for `cellgan train` after CONFIG (--set, --fault, --resume)
  bool recovery = false;                // mpirun --enable-recovery: lost workers survived in place
  bool as_root = false;                 // mpirun needs --allow-run-as-root
  std::string srun_mpi = "pmix";        // srun's --mpi plugin
  std::vector<std::string> exported;    // variables mpirun passes to every rank, other nodes' too (-x NAME)
};

// The cores this process may run on (its affinity mask).
int cores_seen();
// srun when `choice` is "srun", or "auto" inside a SLURM job (SLURM_JOB_ID
// set); mpirun otherwise. Throws InputError for another choice, and for
// srun outside a SLURM job.
Starter choose_starter(const std::string& choice);

// The worker count: `requested` when > 0 (InputError, naming -w, when the
// layout refuses it), else one worker per unit of the layout (cell,
// class; layout_rules.h), at most `slots` (the cores, or the tasks of a
// SLURM allocation less the master) and, when the run computes on `gpus`
// GPUs (> 0), at most one per GPU: a worker trains all its cells as one
// stack (worker/lockstep_training.h), so a GPU is best used by one
// process. At least 1.
int choose_workers(const Config& config, int requested, int slots, int gpus = 0);

// The GPUs that choose_workers() fills one worker each, for runtime.device
// `device` with `visible` GPUs on this host: none for cpu, or when no GPU
// is visible; one for cuda:N (every rank computes there); none under srun
// (the allocation's tasks set the count, on every node of it, and each
// task may see only its own GPU); else the visible ones.
int gpus_to_fill(const std::string& device, int visible, Starter starter);

// InputError, naming -w, when data_parallel's nccl all-reduce would put two
// of `workers` on one GPU: more workers than `visible` GPUs, or several on
// cuda:N, under mpirun on this host alone (the caller leaves the check out
// when an Open MPI default hostfile may place ranks elsewhere). NCCL
// refuses two ranks of one communicator on one GPU, and every restart
// would fail alike. Nothing to check under srun or without GPUs.
void check_gpus_for_nccl(const Config& config, int workers, int visible, Starter starter);

// argv of one attempt. `resume` (a restart) replaces any --resume of
// train_args by `--resume auto`, to go on from the newest checkpoint, and
// leaves out the --fault options: they are injected in the first attempt
// only (the configuration's `faults:` apply to every attempt).
std::vector<std::string> job_command(const JobOptions& options, Starter starter, int workers, bool resume);

// The environment every rank (and mpirun) gets, each unless already set:
// one intra-op thread, passive waits; no single-copy (CMA) transfers
// between ranks on one machine, whose failed reads print "Read -1,
// expected N" lines under load or when a peer dies; and, under
// --enable-recovery, PMIx's messages to syslog rather than stderr (a lost
// rank makes mpirun print "PMIX ERROR: BAD-PARAM", a known harmless defect of Open MPI
// 4.1 with PMIx 4).
std::vector<std::string> job_environment(const JobOptions& options);

}  // namespace cellgan::launch
