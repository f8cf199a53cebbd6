// cellgan classifier: train the score classifier of an image dataset.
#include <torch/torch.h>

#include <fmt/core.h>

#include <iostream>

#include "app/commands.h"
#include "app/parse_options.h"
#include "common/config.h"
#include "common/dataset.h"
#include "common/error.h"
#include "common/log.h"
#include "common/math_kernels.h"
#include "common/nn/classifier.h"
#include "common/rng.h"

namespace cellgan::app {

namespace po = boost::program_options;

int classifier_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("dataset", po::value<std::string>()->default_value("mnist"), "mnist | fashion | idx")(
      "data", po::value<std::string>()->default_value(""), "IDX folder (default: the dataset's)")(
      "epochs", po::value<std::int64_t>()->default_value(40), "training epochs")(
      "seed", po::value<std::uint64_t>()->default_value(1), "seed")(
      "threads", po::value<int>()->default_value(2), "Torch threads")(
      "out", po::value<std::string>()->default_value(""), "output file (default: <data folder>/classifier.pt)");
  po::variables_map vm;
  if (!parse_options("classifier", "[options]", options, nullptr, args, vm)) return kExitOk;

  // Reuse the configuration's parser for the dataset name and its checks.
  const Config config = parse_config(
      fmt::format("data: {{dataset: {}, path: '{}'}}\nnetwork: {{kind: mlp}}\n", vm["dataset"].as<std::string>(),
                  vm["data"].as<std::string>()),
      "cellgan classifier");
  if (is_toy(config.data.dataset))
    throw InputError("cellgan classifier: --dataset: expected mnist, fashion or idx (toy data needs no classifier)");
  if (vm["epochs"].as<std::int64_t>() < 1) throw InputError("cellgan classifier: --epochs: expected >= 1");
  torch::set_num_threads(vm["threads"].as<int>());
  std::string out = vm["out"].as<std::string>();
  if (out.empty()) out = dataset_folder(config.data) + "/classifier.pt";

  const ImageData train = load_image_data(config.data, Split::kTrain);
  const ImageData test = load_image_data(config.data, Split::kTest);
  // The classifier's weights, and so every FID it gives, depend on the kernels.
  log::info("training the classifier on {} kernels", blas_kernels());
  const ClassifierReport report = train_classifier(
      train, test, vm["epochs"].as<std::int64_t>(),
      derive_seed(vm["seed"].as<std::uint64_t>(), Stream::kClassifier), out);
  std::cout << fmt::format("classifier: {} train / {} test images, {} epochs, test accuracy {:.2f}% ({:.0f} s) -> {}\n",
                           train.count, test.count, report.epochs, 100.0 * report.test_accuracy, report.seconds,
                           out);
  return kExitOk;
}

}  // namespace cellgan::app
