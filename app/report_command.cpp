// cellgan report RUN_DIR: writes RUN_DIR/report.html (master/run_report.h)
// for any run folder, finished, stopped or failed, of any layout.
#include <iostream>

#include "app/commands.h"
#include "app/parse_options.h"
#include "common/error.h"
#include "master/run_report.h"

namespace cellgan::app {

namespace po = boost::program_options;

int report_command(const Args& args) {
  po::options_description options(
      "Writes RUN_DIR/report.html: the run's summary, curves, samples and events in one file that opens without "
      "the run, the data or a network. The master writes it too, at checkpoints (at most every 30 s) and at the end");
  options.add_options()("run-dir", po::value<std::string>(), "the run folder (output_dir)");
  po::positional_options_description positional;
  positional.add("run-dir", 1);
  po::variables_map vm;
  if (!parse_options("report", "RUN_DIR", options, &positional, args, vm)) return kExitOk;
  if (!vm.count("run-dir")) throw InputError("cellgan report: expected a run folder: cellgan report RUN_DIR");
  const std::string path = write_run_report(vm["run-dir"].as<std::string>());
  std::cout << "report: " << path << "\n";
  return kExitOk;
}

}  // namespace cellgan::app
