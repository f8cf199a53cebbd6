// cellgan launch CONFIG: runs `cellgan train` under mpirun or srun with the
// right rank count, and supervises it to a finished run (launch/launcher.h).
#include <fmt/core.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/interrupts.h"
#include "app/kernel_choice.h"
#include "app/parse_options.h"
#include "common/config.h"
#include "common/error.h"
#include "common/fault_plan.h"
#include "common/nn/device.h"
#include "common/nn/run_checks.h"
#include "launch/launcher.h"
#include "master/master_layout.h"
#include "master/resume_plan.h"

namespace cellgan::app {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// The slots a job may fill: a SLURM allocation's tasks, else the cores.
int worker_slots(launch::Starter starter) {
  if (starter == launch::Starter::kSrun)
    if (const char* tasks = std::getenv("SLURM_NTASKS"); tasks != nullptr && std::atoi(tasks) >= 2)
      return std::atoi(tasks) - 1;
  return launch::cores_seen();
}

// Whether mpirun has a default hostfile, and so may place ranks on hosts
// whose GPUs are not the ones seen here.
bool default_hostfile() {
  return std::getenv("OMPI_MCA_orte_default_hostfile") != nullptr ||
         std::getenv("PRTE_MCA_prte_default_hostfile") != nullptr;
}

// What the master checks of the device at its start (no such GPU; fp16,
// nccl or CUDA graphs where they cannot run), checked here first so that
// it is one line before any rank starts. Without a GPU to check against
// here (in a SLURM allocation, or with a hostfile, the ranks may run on
// other nodes), the master checks alone.
void check_device(const Config& config, launch::Starter starter) {
  if (starter == launch::Starter::kSrun || default_hostfile() || std::getenv("SLURM_JOB_ID") != nullptr ||
      std::getenv("HYDRA_HOST_FILE") != nullptr)
    return;
  check_runs_on(config, device_to_check(config.runtime.device, 0, fmt::format("{}: runtime.device", config.source)));
}

// The worker count (launch::choose_workers), refused when data_parallel's
// nccl would put two workers on one GPU of this host.
int chosen_workers(const Config& config, int requested, launch::Starter starter) {
  const int visible = config.runtime.device == "cpu" ? 0 : visible_gpus();
  const int workers = launch::choose_workers(config, requested, worker_slots(starter),
                                             launch::gpus_to_fill(config.runtime.device, visible, starter));
  if (!default_hostfile()) launch::check_gpus_for_nccl(config, workers, visible, starter);
  return workers;
}

// The --fault values, checked as the master will check them (a fault that
// does not fit is refused before any rank starts), passed to the job.
void add_fault_options(const std::vector<std::string>& values, const Config& config, launch::LaunchSetup& setup) {
  std::vector<Fault> faults;
  for (const std::string& f : values) {
    faults.push_back(parse_fault_option(f));
    setup.job.train_args.insert(setup.job.train_args.end(), {"--fault", f});
  }
  Config with_faults = config;
  add_command_line_faults(with_faults, faults, setup.workers);
}

// The configuration's faults are every attempt's: without --recovery a kill
// or a stall among them strikes every restart again.
void warn_of_faults_every_attempt(const Config& config, const std::function<void(const std::string&)>& say) {
  for (const Fault& f : config.faults)
    if (f.kind == FaultKind::kKill || f.kind == FaultKind::kStall) {
      say(fmt::format("warning: the configuration's fault '{}' strikes every attempt, so each restart meets it "
                      "again: give it as --fault (the first attempt only), or launch with --recovery",
                      to_text(f)));
      return;
    }
}

}  // namespace

int launch_command(const Args& args) {
  // From the first moment: an interrupt before the job starts ends it at
  // once (the launcher's loop sees it), with nothing lost.
  // SIGHUP too: a closed terminal or ssh session stops the job cleanly.
  const std::atomic<int>& interrupts = catch_interrupts(Supervisor::kLaunch);
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>()->required(), "the run's YAML configuration")(
      "workers,w", po::value<int>()->default_value(0)->value_name("W"),
      "worker ranks (the job has W + 1); default: one per cell (per class for per_class, per core for "
      "data_parallel), at most the cores seen "
      "and one per GPU the run computes on, or the tasks of a SLURM allocation less one")(
      "max-restarts", po::value<int>()->default_value(3)->value_name("N"),
      "restart a job that stopped, failed or stalled at most N times, each from its newest checkpoint")(
      "recovery", po::bool_switch(),
      "mpirun --enable-recovery: a lost worker is survived in place, without a restart")(
      "stall-timeout", po::value<double>()->default_value(120)->value_name("SECONDS"),
      "end and restart a job that writes nothing to metrics.jsonl, events.log or run.json for this long (or for 4x "
      "the longest gap seen, when longer)")(
      "starter", po::value<std::string>()->default_value("auto")->value_name("auto|mpirun|srun"),
      "what starts the ranks: srun inside a SLURM job, else mpirun")(
      "resume", po::value<std::string>()->value_name("auto|PATH"), "passed to cellgan train (restarts use auto)")(
      "fault", po::value<std::vector<std::string>>()->composing(),
      "passed to cellgan train in the first attempt only (repeatable)")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "passed to cellgan train (repeatable)");
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map vm;
  if (!parse_options("launch", "CONFIG   (runs mpirun -np W+1 cellgan train CONFIG, and restarts it)", options,
                     &positional, args, vm))
    return kExitOk;
  const int max_restarts = vm["max-restarts"].as<int>();
  if (max_restarts < 0) throw InputError(fmt::format("--max-restarts: {}: expected 0 or more", max_restarts));
  const double stall = vm["stall-timeout"].as<double>();
  if (!(stall >= 1 && stall <= 86400))
    throw InputError(fmt::format("--stall-timeout: {}: expected 1..86400 seconds", stall));
  const int requested = vm["workers"].as<int>();
  if (requested < 0) throw InputError(fmt::format("-w: {}: expected 1 or more worker ranks", requested));

  std::vector<std::string> settings;
  if (vm.count("set")) settings = vm["set"].as<std::vector<std::string>>();
  const std::string config_path = vm["config"].as<std::string>();
  // Read here as the job will read it: bad input is refused before any rank starts.
  const Config config = load_config(config_path, settings);

  if (vm.count("resume") && vm["resume"].as<std::string>().empty())
    throw InputError("--resume: '': expected auto or a checkpoint folder");
  const std::string resume = vm.count("resume") ? vm["resume"].as<std::string>() : "";

  launch::LaunchSetup setup;
  setup.starter = launch::choose_starter(vm["starter"].as<std::string>());
  check_device(config, setup.starter);
  setup.workers = chosen_workers(config, requested, setup.starter);
  // What the master would refuse about the run folder after the ranks
  // started (in use, finished, not this run, records missing), said at
  // once, with nothing written there.
  const std::vector<std::string> warnings =
      plan_resume(config, resume, make_master_layout(config, setup.workers)->records_per_generation()).warnings;
  setup.max_restarts = max_restarts;
  setup.stall_floor = std::chrono::milliseconds(static_cast<std::int64_t>(stall * 1000));
  setup.run_dir = config.output_dir;
  setup.job.cellgan = fs::read_symlink("/proc/self/exe").string();
  setup.job.config = config_path;
  setup.job.recovery = vm["recovery"].as<bool>();
  setup.job.as_root = ::geteuid() == 0;
  if (const char* mpi = std::getenv("CELLGAN_SRUN_MPI"); mpi != nullptr && *mpi != '\0') setup.job.srun_mpi = mpi;
  for (const std::string& s : settings) setup.job.train_args.insert(setup.job.train_args.end(), {"--set", s});
  if (vm.count("fault")) add_fault_options(vm["fault"].as<std::vector<std::string>>(), config, setup);
  if (!resume.empty()) setup.job.train_args.insert(setup.job.train_args.end(), {"--resume", resume});

  // The kernels every rank gets (mpirun -x, for other nodes; srun passes the environment).
  for (const char* name : {"OPENBLAS_CORETYPE", "CELLGAN_BLAS_CHOSEN"})
    if (std::getenv(name) != nullptr) setup.job.exported.emplace_back(name);

  const auto say = [](const std::string& line) { std::cerr << "cellgan launch: " << line << std::endl; };
  if (const std::string kernels = kernel_choice_line(); !kernels.empty()) say(kernels);
  for (const std::string& line : warnings) say("warning: " + line);
  if (!setup.job.recovery) warn_of_faults_every_attempt(config, say);
  return launch::run_launch(setup, interrupts, say);
}

}  // namespace cellgan::app
