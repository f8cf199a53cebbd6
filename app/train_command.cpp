// cellgan train CONFIG: the coevolution job, one process per MPI rank.
#include <torch/torch.h>

#include <fmt/core.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "app/commands.h"
#include "app/interrupts.h"
#include "app/parse_options.h"
#include "common/comm/mpi_session.h"
#include "common/error.h"
#include "common/fault_plan.h"
#include "common/launch_rank.h"
#include "common/log.h"
#include "master/master.h"
#include "worker/worker.h"

namespace cellgan::app {

namespace po = boost::program_options;

// How long a rank whose work is done waits in MPI_Finalize for the others.
constexpr std::chrono::milliseconds kFinalizeLimit{10000};

int train_command(int argc, char** argv, const Args& args) {
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>()->required(), "the run's YAML configuration")(
      "resume", po::value<std::string>()->value_name("auto|PATH"),
      "continue the interrupted run in output_dir: from its newest complete checkpoint (auto), or from the "
      "checkpoint folder PATH")(
      "fault", po::value<std::vector<std::string>>()->composing(),
      "inject a fault, e.g. kill:rank=2,gen=3 (repeatable; kinds kill, stall, nan, delay, corrupt-checkpoint, "
      "drop-heartbeats; docs/operations.md)")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "change a key of the configuration, e.g. --set grid.rows=3 --set output_dir=runs/r3 (repeatable; a "
      "resumed run needs the same settings)");
  po::positional_options_description positional;
  positional.add("config", 1);
  po::variables_map vm;
  // Every rank parses the command line; bad arguments fail on all at once.
  if (!parse_options("train", "CONFIG   (launch: mpirun -np W+1 cellgan train CONFIG)", options, &positional,
                     args, vm))
    return kExitOk;
  std::vector<Fault> faults;
  if (vm.count("fault"))
    for (const std::string& text : vm["fault"].as<std::vector<std::string>>()) faults.push_back(parse_fault_option(text));
  torch::set_num_threads(1);
  MpiSession session(&argc, &argv);
  if (session.world_rank() != 0) {
    // mpirun forwards SIGUSR1 to every rank: the master alone acts on it.
    std::signal(SIGUSR1, SIG_IGN);
    // In a SLURM job, SIGTERM to every process is the scheduler's notice
    // (requeue, preemption, scancel, time limit): the master checkpoints,
    // and a worker that died of it first would be logged as a lost worker.
    if (std::getenv("SLURM_JOB_ID")) std::signal(SIGTERM, SIG_IGN);
    else end_on_sigterm_after(std::chrono::milliseconds(500));
    Worker worker(session);
    const int code = worker.run();
    // A master presumed dead never reaches MPI_Finalize: end every rank.
    if (worker.master_lost()) session.abort(code);
    session.finalize_within(kFinalizeLimit, code);
    return code;
  }
  std::vector<std::string> settings;
  if (vm.count("set")) settings = vm["set"].as<std::vector<std::string>>();
  Master master(session, vm["config"].as<std::string>(), vm.count("resume") ? vm["resume"].as<std::string>() : "",
                std::move(faults), std::move(settings));
  master.note_events(launch_notes());
  RunResult result;
  try {
    result = master.run();
  } catch (const std::exception& e) {
    if (master.worker_lost()) {
      const int code = exit_code_of(e);  // common/error.h: the one mapping
      std::cerr << (code == kExitRestart ? "cellgan: stopped: " : "cellgan: failed: ") << e.what() << "\n";
      report_exit_code(code);
      // Under --enable-recovery MPI_Abort makes mpirun exit 0: end like a
      // finished rank instead, with the code. Otherwise a lost worker never
      // reaches MPI_Finalize: end every rank.
      if (session.survives_rank_loss()) {
        session.finalize_within(kFinalizeLimit, code, [&master] { master.kill_remaining_workers(); });
        return code;
      }
      session.abort(code);
    }
    throw;
  }
  std::string line = fmt::format("best ensemble: {} ({} generator{})", result.best, result.best_generators,
                                 result.best_generators == 1 ? "" : "s");
  for (const auto& [name, value] : result.scores) line += fmt::format("  {} {:.4f}", name, value);
  std::cout << line << "\n"
            << "samples: " << result.output_dir << "/samples.png  ensemble: " << result.output_dir
            << "/ensemble.bin  report: " << result.output_dir << "/report.html  ("
            << fmt::format("{:.1f}", result.seconds) << " s)\n";
  std::cout.flush();
  report_exit_code(kExitOk);
  session.finalize_within(kFinalizeLimit, kExitOk, [&master] { master.kill_remaining_workers(); });
  return kExitOk;
}

}  // namespace cellgan::app
