// The job's command line (see job_command.h).
#include "launch/job_command.h"

#include <sched.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>

#include "common/error.h"
#include "common/layout_rules.h"

namespace cellgan::launch {

int cores_seen() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

Starter choose_starter(const std::string& choice) {
  if (choice == "mpirun") return Starter::kMpirun;
  if (choice == "srun") {
    if (std::getenv("SLURM_JOB_ID") == nullptr)
      throw InputError("--starter srun: not inside a SLURM allocation (SLURM_JOB_ID is not set): expected sbatch or "
                       "salloc around it, or --starter mpirun");
    return Starter::kSrun;
  }
  if (choice == "auto") return std::getenv("SLURM_JOB_ID") != nullptr ? Starter::kSrun : Starter::kMpirun;
  throw InputError(fmt::format("--starter: '{}': expected auto, mpirun or srun", choice));
}

int choose_workers(const Config& config, int requested, int slots, int gpus) {
  if (requested > 0) {
    if (const std::string misfit = workers_misfit(config, requested); !misfit.empty())
      throw InputError(fmt::format("-w {}: {} worker ranks {}", requested, requested, misfit));
    return requested;
  }
  const WorkerRange range = worker_range(config);
  if (gpus > 0) slots = std::min(slots, gpus);
  int workers = range.natural > 0 ? std::min(range.natural, slots) : slots;
  if (range.max > 0) workers = std::min(workers, range.max);
  return std::max(1, workers);
}

int gpus_to_fill(const std::string& device, int visible, Starter starter) {
  if (device == "cpu" || visible <= 0 || starter == Starter::kSrun) return 0;
  if (device.rfind("cuda:", 0) == 0) return 1;
  return visible;
}

void check_gpus_for_nccl(const Config& config, int workers, int visible, Starter starter) {
  if (config.layout != LayoutKind::kDataParallel || config.data_parallel.allreduce != AllreduceKind::kNccl ||
      starter == Starter::kSrun || visible <= 0)
    return;
  const int gpus = gpus_to_fill(config.runtime.device, visible, starter);
  if (workers > gpus)
    throw InputError(fmt::format(
        "-w {}: data_parallel.allreduce nccl needs a GPU of its own for each worker, and runtime.device {} gives "
        "{} here: expected -w {} or fewer, or another allreduce",
        workers, config.runtime.device, gpus, gpus));
}

std::vector<std::string> job_command(const JobOptions& options, Starter starter, int workers, bool resume) {
  std::vector<std::string> argv;
  const std::string ranks = std::to_string(workers + 1);
  if (starter == Starter::kSrun) {
    argv = {"srun", "--mpi=" + options.srun_mpi, "--ntasks", ranks};
  } else {
    argv = {"mpirun"};
    if (options.as_root) argv.push_back("--allow-run-as-root");
    // -q: the launcher says how a job ended; Open MPI's banners about a
    // rank's exit code would repeat it in many lines.
    argv.insert(argv.end(), {"-q", "--oversubscribe", "--bind-to", "none"});
    for (const std::string& name : options.exported) argv.insert(argv.end(), {"-x", name});
    if (options.recovery) argv.push_back("--enable-recovery");
    argv.insert(argv.end(), {"-np", ranks});
  }
  argv.insert(argv.end(), {options.cellgan, "train", options.config});
  for (std::size_t i = 0; i < options.train_args.size(); ++i) {
    const std::string& a = options.train_args[i];
    // A restart resumes from the newest checkpoint, and the --fault options
    // were for the first attempt: injected again, a kill would strike the
    // restarted run at the same generation, every time.
    if (resume && (a == "--resume" || a == "--fault")) {
      ++i;  // and its value
      continue;
    }
    if (resume && (a.rfind("--resume=", 0) == 0 || a.rfind("--fault=", 0) == 0)) continue;
    argv.push_back(a);
  }
  if (resume) argv.insert(argv.end(), {"--resume", "auto"});
  return argv;
}

std::vector<std::string> job_environment(const JobOptions& options) {
  std::vector<std::pair<const char*, const char*>> defaults = {
      {"OMP_NUM_THREADS", "1"},
      {"OMP_WAIT_POLICY", "PASSIVE"},
      {"OMPI_MCA_mpi_yield_when_idle", "1"},
      {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}};
  if (options.recovery) defaults.emplace_back("PMIX_OUTPUT_REDIRECT", "syslog");
  std::vector<std::string> env;
  for (const auto& [name, value] : defaults) {
    const char* set = std::getenv(name);
    env.push_back(fmt::format("{}={}", name, set != nullptr ? set : value));
  }
  return env;
}

}  // namespace cellgan::launch
