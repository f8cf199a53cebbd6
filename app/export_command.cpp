// cellgan export: a saved ensemble as a file PyTorch loads (common/nn/ensemble_export.h).
#include <torch/torch.h>

#include <fmt/core.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "app/commands.h"
#include "app/option_checks.h"
#include "app/parse_options.h"
#include "common/error.h"
#include "common/image_files.h"
#include "common/nn/class_generator.h"
#include "common/nn/conditional_networks.h"
#include "common/nn/ensemble.h"
#include "common/nn/ensemble_export.h"

namespace cellgan::app {

namespace po = boost::program_options;

namespace {

// --out: a .pt file that may be written and is not the --ensemble file.
std::string out_option(const po::variables_map& vm, const std::string& ensemble) {
  const std::string out = vm["out"].as<std::string>();
  if (out.size() < 4 || out.compare(out.size() - 3, 3, ".pt") != 0)
    throw InputError(fmt::format("cellgan export: --out: '{}': expected a .pt file name", out));
  check_output_file("export", "out", out);
  std::error_code ec;
  if (out == ensemble || std::filesystem::equivalent(out, ensemble, ec))
    throw InputError(
        fmt::format("cellgan export: --out: '{}' is the --ensemble file: expected another file name", out));
  return out;
}

}  // namespace

int export_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("ensemble", po::value<std::string>()->required(), "ensemble.bin of a finished run")(
      "out", po::value<std::string>()->required(),
      "output: a .pt file for Python's torch.load (python/cellgan_ensemble.py loads and samples it)");
  po::variables_map vm;
  if (!parse_options("export", "--ensemble FILE --out FILE.pt", options, nullptr, args, vm)) return kExitOk;
  const std::string path = vm["ensemble"].as<std::string>();
  const std::string out = out_option(vm, path);
  torch::set_num_threads(1);
  Ensemble ensemble = Ensemble::load(path);
  // A per_class run's conditional generator: classes.json beside it.
  std::optional<ClassGenerator> classes;
  if (!is_conditional(ensemble.shape) && std::filesystem::exists(ClassGenerator::index_path(path)))
    classes = ClassGenerator::load(path);
  const std::vector<char> bytes = classes ? export_ensemble(*classes) : export_ensemble(ensemble);
  write_file_atomic(out, std::string(bytes.begin(), bytes.end()));
  const Ensemble& exported = classes ? classes->mixture() : ensemble;
  std::cout << fmt::format("{} generators (network {}{}) -> {}\n", exported.generators.size(),
                           to_string(exported.shape.kind),
                           classes ? fmt::format(", {} classes", classes->classes()) : "", out);
  return kExitOk;
}

}  // namespace cellgan::app
