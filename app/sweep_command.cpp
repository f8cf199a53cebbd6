// cellgan sweep: sweeps of grid sizes, worker counts and any configuration
// key, run locally through cellgan launch, or collected from finished run
// folders (a SLURM job array); the work is in sweep/.
#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/interrupts.h"
#include "app/option_checks.h"
#include "app/parse_options.h"
#include "common/config.h"
#include "common/error.h"
#include "sweep/run_record.h"
#include "sweep/sweep_outputs.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_runner.h"

namespace cellgan::app {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// $CELLGAN_MPIRUN split at spaces (each run then `$CELLGAN_MPIRUN -np W+1
// cellgan train ...`), or none: each run is `cellgan launch -w W ...`.
std::vector<std::string> launcher() {
  std::vector<std::string> argv;
  if (const char* env = std::getenv("CELLGAN_MPIRUN"); env && *env) {
    std::istringstream words(env);
    for (std::string w; words >> w;) argv.push_back(w);
  }
  return argv;
}

void print_report(const sweep::OutputsReport& report, const std::string& out) {
  for (const std::string& line : report.unreadable) std::cerr << "cellgan sweep: skipped a run folder: " << line << "\n";
  if (!report.plot_error.empty()) std::cerr << "cellgan sweep: no plots: " << report.plot_error << "\n";
  std::cout << fmt::format("sweep: {}: table {}/sweep.csv, summary {}/sweep.md{}\n", report.counts, out, out,
                           report.plot_error.empty() && report.rows ? " with plots" : "");
}

int collect(const po::variables_map& vm) {
  const std::string dir = vm["collect"].as<std::string>();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(fmt::format("cellgan sweep: --collect: '{}' is not a folder: expected the folder holding the run "
                                 "folders (e.g. runs/ of a SLURM job array)",
                                 dir));
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : dir;
  check_output_folder("sweep", "out", out);
  if (sweep::find_run_folders(dir).empty())
    throw InputError(fmt::format("cellgan sweep: --collect: '{}' holds no run folder (a folder with config.yaml) "
                                 "within 3 levels",
                                 dir));
  sweep::SweepNotes notes;
  notes.title = fmt::format("Collected from the run folders under `{}`.", dir);
  const sweep::OutputsReport report = sweep::write_sweep_outputs(dir, out, notes);
  for (const std::string& f : report.unfinished) std::cerr << "cellgan sweep: unfinished, left out: " << f << "\n";
  print_report(report, out);
  if (report.rows == 0 && report.unfinished.empty()) {
    std::cerr << fmt::format("cellgan sweep: --collect: no run under '{}' finished or can resume (see {}/sweep.md)\n",
                             dir, out);
    return kExitFailure;
  }
  return kExitOk;
}

po::options_description sweep_options() {
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>()->value_name("FILE"), "the base configuration")(
      "grids", po::value<std::string>()->value_name("RxC,..."),
      "grid sizes, e.g. 1x1,2x2,3x3 (default: the configuration's grid)")(
      "workers", po::value<std::string>()->value_name("W,..."),
      "worker counts, e.g. 1,2 (default: one per cell, or per class; data_parallel needs it)")(
      "vary", po::value<std::vector<std::string>>()->composing()->value_name("KEY=V1,V2,..."),
      "values of any key, crossed with the rest, e.g. --vary training.batch_size=32,64,128 (repeatable); "
      "vary.png plots time and score against the first")(
      "seeds", po::value<std::int64_t>()->default_value(1)->value_name("N"),
      "seeds per grid and W: the configuration's seed and the N-1 after it")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "change a key of every run's configuration, e.g. --set training.generations=20 (repeatable)")(
      "out", po::value<std::string>()->value_name("DIR"),
      "the sweep's folder: runs/, logs/, sweep.csv, sweep.md, the plots (default runs/sweep; with --collect, "
      "the collected folder)")(
      "collect", po::value<std::string>()->value_name("DIR"),
      "run nothing: build the outputs from the finished run folders under DIR (e.g. a SLURM job array's)")(
      "list", po::bool_switch(),
      "run nothing, write nothing: print the runs, one a line: NAME, W and the --set settings of the run "
      "(output_dir excepted), separated by tabs (deploy/slurm/sweep.sh reads it)");
  return options;
}

// --collect runs nothing, so the options that shape runs are refused with it.
void refuse_run_options_with_collect(const po::variables_map& vm) {
  for (const char* flag : {"config", "grids", "workers", "vary", "set", "list"})
    if (vm.count(flag) && !vm[flag].defaulted())
      throw InputError(fmt::format("cellgan sweep: --{}: has no effect with --collect: expected only --collect and "
                                   "--out",
                                   flag));
  if (!vm["seeds"].defaulted())
    throw InputError("cellgan sweep: --seeds: has no effect with --collect: expected only --collect and --out");
}

// What a sweep varies, read from its options.
struct SweepRequest {
  std::string config_path;
  std::vector<sweep::GridSize> grids;
  std::vector<int> workers;
  int seeds = 1;
  std::vector<std::string> settings;
  std::vector<sweep::Variation> varies;
};

SweepRequest read_request(const po::variables_map& vm) {
  if (!vm.count("config"))
    throw InputError("cellgan sweep: --config is required (or --collect DIR; see cellgan sweep --help)");
  if (!vm.count("grids") && !vm.count("workers") && !vm.count("vary") && vm["seeds"].defaulted())
    throw InputError("cellgan sweep: nothing to sweep: expected --grids, --workers, --vary or --seeds");
  SweepRequest request;
  if (vm.count("grids")) request.grids = sweep::parse_grids(vm["grids"].as<std::string>());
  if (vm.count("workers")) request.workers = sweep::parse_workers(vm["workers"].as<std::string>());
  request.seeds = static_cast<int>(int_option(vm, "sweep", "seeds", 1, 1000));
  if (vm.count("set")) request.settings = vm["set"].as<std::vector<std::string>>();
  if (vm.count("vary"))
    for (const std::string& text : vm["vary"].as<std::vector<std::string>>())
      request.varies.push_back(sweep::parse_vary(text));
  sweep::check_sweep_settings(request.settings, request.varies);
  request.config_path = vm["config"].as<std::string>();
  return request;
}

// Loads a run's configuration: the base file, the sweep's --set, then the run's own settings.
sweep::ConfigLoader run_loader(const SweepRequest& request) {
  return [&request](const std::vector<std::string>& own) {
    std::vector<std::string> all = request.settings;
    all.insert(all.end(), own.begin(), own.end());
    return load_config(request.config_path, all);
  };
}

// A run folder of this --out left by another command (other --set values,
// say) would be kept, or resumed, as if this sweep had made it: refused
// before anything runs.
void refuse_runs_made_otherwise(const std::vector<sweep::PlannedRun>& plan, const sweep::SweepSetup& setup,
                                const SweepRequest& request) {
  const sweep::ConfigLoader load = run_loader(request);
  for (const sweep::PlannedRun& run : plan) {
    if (run.skip) continue;
    if (const std::optional<std::string> why = sweep::made_otherwise(run, sweep::run_folder(setup, run), load))
      throw InputError(fmt::format("cellgan sweep: --out {}: the run {} there was made otherwise ({}): expected the "
                                   "command that made it, or another --out",
                                   setup.out, run.name, *why));
  }
}

// The runs of the sweep, refused when the configuration refuses every one.
std::vector<sweep::PlannedRun> plan_runs(const SweepRequest& request, const Config& config) {
  const sweep::ConfigLoader load = run_loader(request);
  std::vector<sweep::PlannedRun> plan =
      sweep::plan_sweep(config, request.grids, request.workers, request.seeds, request.varies, load);
  if (!plan.empty() && std::all_of(plan.begin(), plan.end(), [](const sweep::PlannedRun& r) { return r.skip.has_value(); }))
    throw InputError(fmt::format("cellgan sweep: every run is refused, nothing to run: {}: {}", plan.front().name,
                                 *plan.front().skip));
  return plan;
}

// --list: one line a run on stdout (NAME, W, its settings), the skipped ones on stderr.
void list_runs(const std::vector<sweep::PlannedRun>& plan, const std::vector<std::string>& settings) {
  for (const sweep::PlannedRun& run : plan) {
    if (run.skip) {
      std::cerr << "cellgan sweep: skipped " << run.name << ": " << *run.skip << "\n";
      continue;
    }
    std::vector<std::string> line = settings;
    const std::vector<std::string> own = sweep::run_settings(run, "");
    line.insert(line.end(), own.begin(), own.end() - 1);  // all but output_dir
    std::cout << run.name << "\t" << run.workers << "\t" << fmt::format("{}", fmt::join(line, "\t")) << "\n";
  }
}

// Where and how each run of the sweep starts.
sweep::SweepSetup make_setup(const SweepRequest& request, const Config& config, const std::string& out) {
  sweep::SweepSetup setup;
  setup.config = fs::absolute(request.config_path).string();
  setup.settings = request.settings;
  setup.out = fs::absolute(out).lexically_normal().string();
  setup.launcher = launcher();
  setup.cellgan = fs::read_symlink("/proc/self/exe").string();
  setup.generations = config.training.generations;
  return setup;
}

// Runs the plan one run after another, with a status line on a terminal.
sweep::SweepOutcome run_plan(const std::vector<sweep::PlannedRun>& plan, const sweep::SweepSetup& setup) {
  setenv("OMP_NUM_THREADS", "1", 0);
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  const std::atomic<int>& interrupts = catch_interrupts(Supervisor::kSweep);
  // On a terminal, a status line redrawn in place while a run trains; the
  // lines of each run's start and end scroll above it.
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const auto say = [terminal](const std::string& line) { std::cerr << (terminal ? "\r\033[K" : "") << line << std::endl; };
  std::function<void(const std::string&)> status;
  if (terminal) status = [](const std::string& line) { std::cerr << "\r\033[K" << line << std::flush; };
  const sweep::SweepOutcome outcome = sweep::run_sweep(plan, setup, interrupts, say, status);
  if (terminal) std::cerr << "\r\033[K" << std::flush;
  return outcome;
}

// The command that made the sweep, as sweep.md's title shows it.
std::string sweep_command_line(const po::variables_map& vm, const SweepRequest& request) {
  std::string command = fmt::format("cellgan sweep --config {}", request.config_path);
  if (vm.count("grids")) command += " --grids " + vm["grids"].as<std::string>();
  if (vm.count("workers")) command += " --workers " + vm["workers"].as<std::string>();
  for (const sweep::Variation& v : request.varies)
    command += fmt::format(" --vary {}={}", v.key, fmt::join(v.values, ","));
  command += fmt::format(" --seeds {}", request.seeds);
  for (const std::string& s : request.settings) command += " --set " + s;
  return command;
}

// Writes the sweep's outputs, prints what became of the runs, returns the
// exit code. The keys the sweep varied come from OUT/runs/varied-keys.txt,
// where sweep_command records them before the first run.
int report_outcome(const sweep::SweepOutcome& outcome, const std::string& command, const sweep::SweepSetup& setup,
                   const std::string& out) {
  sweep::SweepNotes notes;
  notes.title = "`" + command + "`";
  notes.skipped = outcome.skipped;
  notes.failed = outcome.failed;
  notes.unfinished = outcome.unfinished;
  const sweep::OutputsReport report = sweep::write_sweep_outputs((fs::path(setup.out) / "runs").string(), setup.out, notes);
  print_report(report, out);
  if (outcome.kept) std::cout << fmt::format("sweep: {} of the finished runs were kept from before\n", outcome.kept);
  for (const std::string& line : outcome.failed) std::cout << "  failed: " << line << "\n";
  for (const std::string& line : outcome.skipped) std::cout << "  skipped: " << line << "\n";
  if (outcome.interrupted) {
    std::cout << "sweep: interrupted: run the same command again to resume\n";
    return kExitRestart;
  }
  return outcome.failed.empty() ? kExitOk : kExitFailure;
}

}  // namespace

int sweep_command(const Args& args) {
  po::options_description options = sweep_options();
  po::variables_map vm;
  if (!parse_options("sweep",
                     "--config FILE [--grids 1x1,2x2] [--workers 1,2] [--vary KEY=V1,V2 ...] [--seeds N] [--out DIR]\n"
                     "       cellgan sweep --collect DIR [--out DIR]\n\n"
                     "Runs the experiments one after another, each through `cellgan launch -w W` (or\n"
                     "`$CELLGAN_MPIRUN -np W+1 cellgan train` when set). Ctrl-C checkpoints and stops the current run;\n"
                     "run the same command again to keep the finished runs and resume the others. A combination the\n"
                     "layout refuses (a grid data_parallel cannot train, more workers than cells) is skipped with\n"
                     "the reason.",
                     options, nullptr, args, vm))
    return kExitOk;
  if (vm.count("collect")) {
    refuse_run_options_with_collect(vm);
    return collect(vm);
  }
  const SweepRequest request = read_request(vm);
  // Checked once here, so a bad configuration fails before any run starts;
  // each run's own settings are checked by the plan, which skips what the
  // configuration refuses.
  const Config config = load_config(request.config_path, request.settings);
  const std::vector<sweep::PlannedRun> plan = plan_runs(request, config);
  if (vm["list"].as<bool>()) {
    if (vm.count("out")) throw InputError("cellgan sweep: --out: has no effect with --list: it writes nothing");
    list_runs(plan, request.settings);
    return kExitOk;
  }
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : "runs/sweep";
  check_output_folder("sweep", "out", out);
  const sweep::SweepSetup setup = make_setup(request, config, out);
  refuse_runs_made_otherwise(plan, setup, request);
  std::vector<std::string> varied;
  for (const sweep::Variation& v : request.varies) varied.push_back(v.key);
  sweep::record_varied_keys((fs::path(setup.out) / "runs").string(), varied);
  const sweep::SweepOutcome outcome = run_plan(plan, setup);
  return report_outcome(outcome, sweep_command_line(vm, request), setup, out);
}

}  // namespace cellgan::app
