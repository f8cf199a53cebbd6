// cellgan classifier: train the score classifier of an image dataset.
#include <torch/torch.h>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <iostream>

#include "app/commands.h"
#include "app/option_checks.h"
#include "app/parse_options.h"
#include "common/config.h"
#include "common/dataset.h"
#include "common/error.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/nn/classifier.h"
#include "common/nn/device.h"
#include "common/rng.h"

namespace cellgan::app {

namespace po = boost::program_options;

int classifier_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("dataset", po::value<std::string>()->default_value("mnist"), "mnist | fashion | idx")(
      "data", po::value<std::string>()->default_value(""), "IDX folder (default: the dataset's)")(
      "epochs", po::value<std::int64_t>()->default_value(40), "training epochs")(
      "seed", po::value<std::string>()->default_value("1"), "seed")(
      "threads", po::value<std::int64_t>()->default_value(2), "Torch threads")(
      "device", po::value<std::string>()->default_value("auto"), kDeviceHelp)(
      "out", po::value<std::string>()->default_value(""), "output file (default: <data folder>/classifier.pt)");
  po::variables_map vm;
  if (!parse_options("classifier", "[options]", options, nullptr, args, vm)) return kExitOk;

  // Reuse the configuration's parser for the dataset name and its checks;
  // the emitter quotes whatever the flags hold.
  YAML::Node yaml;
  yaml["data"]["dataset"] = vm["dataset"].as<std::string>();
  yaml["data"]["path"] = vm["data"].as<std::string>();
  const std::string dataset = vm["dataset"].as<std::string>();
  if (dataset == "ring" || dataset == "grid")
    throw InputError("cellgan classifier: --dataset: expected mnist, fashion or idx (toy data needs no classifier)");
  const Config config = parse_config(YAML::Dump(yaml), "cellgan classifier (--dataset, --data)");
  const std::int64_t epochs = int_option(vm, "classifier", "epochs", 1, 1000);
  const std::uint64_t seed = seed_option(vm, "classifier", "seed");
  torch::set_num_threads(static_cast<int>(int_option(vm, "classifier", "threads", 1, 64)));
  const torch::Device device = resolve_device(vm["device"].as<std::string>(), "cellgan classifier: --device");
  std::string out = vm["out"].as<std::string>();
  // An --out given is checked at once; the default, in the data folder, once
  // the data have shown the folder is there.
  const bool default_out = out.empty();
  if (default_out) out = dataset_folder(config.data) + "/classifier.pt";
  if (!default_out) check_output_file("classifier", "out", out);

  const ImageData train = load_image_data(config.data, Split::kTrain);
  const ImageData test = load_image_data(config.data, Split::kTest);
  if (default_out) check_output_file("classifier", "out", out);
  // The classifier's weights, and so every FID it gives, depend on the kernels.
  log::info("training the classifier on {} ({} kernels)", describe_device(device), blas_kernels());
  const ClassifierReport report =
      train_classifier(train, test, epochs, derive_seed(seed, Stream::kClassifier), out, device);
  std::cout << fmt::format("classifier: {} train / {} test images, {} epochs, test accuracy {:.2f}% ({:.0f} s) -> {}\n",
                           train.count, test.count, report.epochs, 100.0 * report.test_accuracy, report.seconds,
                           out);
  return kExitOk;
}

}  // namespace cellgan::app
