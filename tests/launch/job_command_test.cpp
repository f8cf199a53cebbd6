// The job's command line and its worker count.
#include "launch/job_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.h"

namespace cellgan::launch {
namespace {

using Argv = std::vector<std::string>;

Config grid(int rows, int cols, LayoutKind layout = LayoutKind::kCoevolution) {
  Config c;
  c.layout = layout;
  c.grid.rows = rows;
  c.grid.cols = cols;
  return c;
}

TEST(ChooseWorkers, OnePerCellAtMostTheSlots) {
  EXPECT_EQ(choose_workers(grid(3, 3), 0, 16), 9);
  EXPECT_EQ(choose_workers(grid(3, 3), 0, 2), 2);
  EXPECT_EQ(choose_workers(grid(1, 1), 0, 16), 1);
  EXPECT_EQ(choose_workers(grid(10, 1, LayoutKind::kPerClass), 0, 4), 4);
  EXPECT_EQ(choose_workers(grid(10, 1, LayoutKind::kPerClass), 0, 64), 10);
  EXPECT_EQ(choose_workers(grid(1, 1, LayoutKind::kDataParallel), 0, 6), 6);
}

// The GPUs filled one worker each: those the run computes on, as runtime.device
// names them; none under srun, whose allocation sets the count on every node.
TEST(ChooseWorkers, TheGpusToFillAreThoseTheRunComputesOn) {
  EXPECT_EQ(gpus_to_fill("auto", 8, Starter::kMpirun), 8);
  EXPECT_EQ(gpus_to_fill("cuda", 8, Starter::kMpirun), 8);
  EXPECT_EQ(gpus_to_fill("cuda:1", 8, Starter::kMpirun), 1);  // every rank on GPU 1
  EXPECT_EQ(gpus_to_fill("cpu", 8, Starter::kMpirun), 0);
  EXPECT_EQ(gpus_to_fill("auto", 0, Starter::kMpirun), 0);
  EXPECT_EQ(gpus_to_fill("auto", 4, Starter::kSrun), 0);  // this node's GPUs are not the allocation's
  EXPECT_EQ(choose_workers(grid(4, 4), 0, 16, gpus_to_fill("cuda:1", 8, Starter::kMpirun)), 1);
}

// NCCL refuses two ranks on one GPU: such a -w is refused at once, not at
// the first sum of every restart.
TEST(ChooseWorkers, NcclWorkersSharingAGpuAreRefused) {
  Config c = grid(1, 1, LayoutKind::kDataParallel);
  c.data_parallel.allreduce = AllreduceKind::kNccl;
  EXPECT_NO_THROW(check_gpus_for_nccl(c, 2, 2, Starter::kMpirun));
  try {
    check_gpus_for_nccl(c, 4, 2, Starter::kMpirun);
    ADD_FAILURE() << "4 nccl workers on 2 GPUs were not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("-w 4: data_parallel.allreduce nccl needs a GPU of its own for each worker"),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected -w 2 or fewer"), std::string::npos) << e.what();
  }
  c.runtime.device = "cuda:1";
  EXPECT_THROW(check_gpus_for_nccl(c, 2, 8, Starter::kMpirun), InputError);
  c.runtime.device = "auto";
  EXPECT_NO_THROW(check_gpus_for_nccl(c, 4, 2, Starter::kSrun));  // each task may have a GPU of its own
  EXPECT_NO_THROW(check_gpus_for_nccl(c, 4, 0, Starter::kMpirun));  // no GPU here: the job says so itself
  c.data_parallel.allreduce = AllreduceKind::kRing;
  EXPECT_NO_THROW(check_gpus_for_nccl(c, 4, 2, Starter::kMpirun));  // ranks may share a GPU
}

// On GPUs a worker trains all its cells as one stack: one worker per GPU.
TEST(ChooseWorkers, OnePerGpuWhenTheRunComputesOnGpus) {
  EXPECT_EQ(choose_workers(grid(4, 4), 0, 16, /*gpus=*/1), 1);
  EXPECT_EQ(choose_workers(grid(4, 4), 0, 16, 2), 2);
  EXPECT_EQ(choose_workers(grid(1, 1), 0, 16, 4), 1);  // never more than the cells
  EXPECT_EQ(choose_workers(grid(10, 1, LayoutKind::kPerClass), 0, 64, 4), 4);
  EXPECT_EQ(choose_workers(grid(1, 1, LayoutKind::kDataParallel), 0, 16, 2), 2);
  EXPECT_EQ(choose_workers(grid(4, 4), 0, 16, 0), 16);  // no GPU: one per cell, at most the cores
  EXPECT_EQ(choose_workers(grid(4, 4), 4, 16, 1), 4);   // -w still chooses
}

TEST(ChooseWorkers, ARequestedCountIsCheckedAgainstTheLayout) {
  EXPECT_EQ(choose_workers(grid(2, 2), 3, 2), 3);  // more than the cores: allowed when asked for
  try {
    choose_workers(grid(2, 2), 5, 16);
    FAIL() << "5 workers on a 2x2 grid";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "-w 5: 5 worker ranks do not fit a 2x2 grid: expected 1..4 (mpirun -np 2..5)");
  }
  Config strong = grid(1, 1, LayoutKind::kDataParallel);
  strong.data_parallel.scaling = BatchScaling::kStrong;
  strong.training.batch_size = 4;
  EXPECT_THROW(choose_workers(strong, 5, 16), InputError);
  EXPECT_EQ(choose_workers(strong, 0, 16), 4);
}

TEST(JobCommand, MpirunWithTheRankCountAndTheTrainOptions) {
  JobOptions o;
  o.cellgan = "/bin/cellgan";
  o.config = "c.yaml";
  o.train_args = {"--set", "seed=2", "--resume", "runs/x/checkpoints/gen-000004", "--fault", "kill:rank=1,gen=3"};
  o.recovery = true;
  EXPECT_EQ(job_command(o, Starter::kMpirun, 3, false),
            (Argv{"mpirun", "-q", "--oversubscribe", "--bind-to", "none", "--enable-recovery", "-np", "4", "/bin/cellgan",
                  "train", "c.yaml", "--set", "seed=2", "--resume", "runs/x/checkpoints/gen-000004", "--fault",
                  "kill:rank=1,gen=3"}));
  // A restart resumes from the newest checkpoint, whatever the first start
  // said, without the faults injected in the first attempt.
  o.as_root = true;
  o.recovery = false;
  EXPECT_EQ(job_command(o, Starter::kMpirun, 1, true),
            (Argv{"mpirun", "--allow-run-as-root", "-q", "--oversubscribe", "--bind-to", "none", "-np", "2", "/bin/cellgan",
                  "train", "c.yaml", "--set", "seed=2", "--resume", "auto"}));
}

// No stray lines from Open MPI: no single-copy (CMA) reads, and PMIx's
// "BAD-PARAM" of a rank lost under --enable-recovery kept off stderr; what
// the user set wins.
TEST(JobEnvironment, KeepsOpenMpisStrayLinesOut) {
  ::unsetenv("OMPI_MCA_btl_vader_single_copy_mechanism");
  ::unsetenv("PMIX_OUTPUT_REDIRECT");
  JobOptions o;
  const auto has = [](const Argv& env, const std::string& entry) {
    return std::find(env.begin(), env.end(), entry) != env.end();
  };
  Argv env = job_environment(o);
  EXPECT_TRUE(has(env, "OMPI_MCA_btl_vader_single_copy_mechanism=none"));
  EXPECT_TRUE(has(env, "OMP_NUM_THREADS=1"));
  EXPECT_FALSE(std::any_of(env.begin(), env.end(), [](const std::string& e) { return e.rfind("PMIX_OUTPUT", 0) == 0; }));
  o.recovery = true;
  EXPECT_TRUE(has(job_environment(o), "PMIX_OUTPUT_REDIRECT=syslog"));
  ::setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "cma", 1);
  EXPECT_TRUE(has(job_environment(o), "OMPI_MCA_btl_vader_single_copy_mechanism=cma"));
  ::unsetenv("OMPI_MCA_btl_vader_single_copy_mechanism");
}

TEST(JobCommand, MpirunPassesTheExportedVariablesToEveryRank) {
  JobOptions o;
  o.cellgan = "cellgan";
  o.config = "c.yaml";
  o.exported = {"OPENBLAS_CORETYPE", "CELLGAN_BLAS_CHOSEN"};
  o.recovery = true;
  EXPECT_EQ(job_command(o, Starter::kMpirun, 1, false),
            (Argv{"mpirun", "-q", "--oversubscribe", "--bind-to", "none", "-x", "OPENBLAS_CORETYPE", "-x",
                  "CELLGAN_BLAS_CHOSEN", "--enable-recovery", "-np", "2", "cellgan", "train", "c.yaml"}));
  // srun passes the whole environment (its default, --export=ALL).
  EXPECT_EQ(job_command(o, Starter::kSrun, 1, false),
            (Argv{"srun", "--mpi=pmix", "--ntasks", "2", "cellgan", "train", "c.yaml"}));
}

TEST(JobCommand, SrunInsideAnAllocation) {
  JobOptions o;
  o.cellgan = "cellgan";
  o.config = "c.yaml";
  o.srun_mpi = "pmi2";
  EXPECT_EQ(job_command(o, Starter::kSrun, 2, false),
            (Argv{"srun", "--mpi=pmi2", "--ntasks", "3", "cellgan", "train", "c.yaml"}));
}

TEST(ChooseStarter, NamesTheOption) {
  EXPECT_EQ(choose_starter("mpirun"), Starter::kMpirun);
  ::setenv("SLURM_JOB_ID", "42", 1);
  EXPECT_EQ(choose_starter("srun"), Starter::kSrun);
  EXPECT_EQ(choose_starter("auto"), Starter::kSrun);
  ::unsetenv("SLURM_JOB_ID");
  EXPECT_THROW(choose_starter("srun"), InputError);
  EXPECT_EQ(choose_starter("auto"), Starter::kMpirun);
  EXPECT_THROW(choose_starter("ssh"), InputError);
}

}  // namespace
}  // namespace cellgan::launch
