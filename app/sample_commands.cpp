// cellgan sample / cellgan score: using a saved ensemble.
#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "app/commands.h"
#include "app/option_checks.h"
#include "app/parse_options.h"
#include "common/config.h"
#include "common/error.h"
#include "common/image_files.h"
#include "common/nn/class_generator.h"
#include "common/nn/classifier.h"
#include "common/nn/conditional_networks.h"
#include "common/nn/device.h"
#include "common/nn/ensemble.h"
#include "common/nn/networks.h"
#include "common/nn/scores.h"
#include "common/path_checks.h"
#include "common/run_files.h"
#include "common/rng.h"
#include "common/run_files.h"
#include "common/sample_limits.h"
#include "master/sample_png.h"

namespace cellgan::app {

namespace po = boost::program_options;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<float> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kCPU).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// The latent size a configuration names for `shape` (a conditional
// network's label slots are not part of it).
std::int64_t latent_dim_of(const NetworkShape& shape) {
  return shape.latent_dim - (is_conditional(shape) ? kClassCount : 0);
}

// The ensemble at `path` must be one that `config` describes: samples of
// the width its dataset has, generators of its network (kind and sizes),
// and, when the folder of the ensemble holds its run's config.yaml, the
// dataset that run trained on. Otherwise one line naming what differs.
void check_ensemble_matches(const Config& config, const Ensemble& ensemble, const std::string& path) {
  const NetworkShape want = network_shape(config);
  const NetworkShape& have = ensemble.shape;
  if (have.data_dim != want.data_dim)
    throw InputError(fmt::format("{}: the ensemble makes {}-value samples: expected {} for dataset {}", path,
                                 have.data_dim, want.data_dim, to_string(config.data.dataset)));
  std::vector<std::string> differences;
  if (have.kind != want.kind)
    differences.push_back(fmt::format("network.kind {} vs {}", to_string(have.kind), to_string(want.kind)));
  if (latent_dim_of(have) != latent_dim_of(want))
    differences.push_back(fmt::format("network.latent_dim {} vs {}", latent_dim_of(have), latent_dim_of(want)));
  if (have.kind == NetworkKind::kToy && want.kind == NetworkKind::kToy) {
    if (have.toy_hidden != want.toy_hidden)
      differences.push_back(fmt::format("network.toy_hidden {} vs {}", have.toy_hidden, want.toy_hidden));
    if (have.toy_layers != want.toy_layers)
      differences.push_back(fmt::format("network.toy_layers {} vs {}", have.toy_layers, want.toy_layers));
  }
  if (!differences.empty())
    throw InputError(fmt::format("{}: the ensemble's generators are not the network of {} ({}: the ensemble's vs "
                                 "the configuration's): expected the configuration of the run that made it",
                                 path, config.source, fmt::join(differences, ", ")));
  const std::string run_config = (std::filesystem::path(path).parent_path() / run_files::kConfig).string();
  if (!why_no_input_file(run_config).empty()) return;  // an ensemble outside its run folder
  DatasetKind trained_on;
  try {
    trained_on = load_config(run_config).data.dataset;
  } catch (const InputError&) {
    return;  // not a configuration cellgan can read: it records nothing
  }
  if (trained_on != config.data.dataset)
    throw InputError(fmt::format("{}: the ensemble was trained on data.dataset {} ({}), {} has {}: expected the "
                                 "configuration of the run that made it",
                                 path, to_string(trained_on), run_config, config.source,
                                 to_string(config.data.dataset)));
}

// The samples an ensemble drew, checked as a sample file is: a broken
// ensemble (non-finite weights) is named, not scored or written.
void check_drawn_samples(const torch::Tensor& samples, DatasetKind kind, const std::string& path) {
  const torch::Tensor c = samples.to(torch::kCPU).contiguous();
  check_sample_values(c.data_ptr<float>(), c.size(0), c.size(1), kind, path + ": its samples");
}

// The data an ensemble of `data_dim`-value samples was trained on, as far
// as its samples' checks go.
DatasetKind kind_of_samples(std::int64_t data_dim) { return data_dim == 2 ? DatasetKind::kRing : DatasetKind::kMnist; }

constexpr const char* kCountWhy = "the most samples drawn at once";

// Writes `samples` to `out`: .npy, or a PNG drawn as the run draws
// samples.png (with its configuration), a scatter (2-D points) or a grid
// of 28x28 images.
void write_samples(const std::string& out, const torch::Tensor& samples, const std::optional<Config>& config) {
  const std::int64_t n = samples.size(0), dim = samples.size(1);
  if (ends_with(out, ".npy")) {
    write_npy(out, to_vector(samples), n, dim);
  } else if (config) {
    write_samples_png(*config, out, to_vector(samples));
  } else if (dim == 2) {
    write_scatter_png(out, to_vector(samples), {}, 6.0f, 512);
  } else {
    write_image_grid_png(out, to_vector(samples), n, 28, 28, square_grid_width(n));
  }
}

// --labels: "" when not given; InputError unless a .npy file that may be
// written and is not the --out file.
std::string labels_option(const po::variables_map& vm, const std::string& out) {
  if (!vm.count("labels")) return "";
  const std::string labels_out = vm["labels"].as<std::string>();
  if (!ends_with(labels_out, ".npy"))
    throw InputError(fmt::format("cellgan sample: --labels: '{}': expected a .npy file name", labels_out));
  check_output_file("sample", "labels", labels_out);
  std::error_code ec;
  if (labels_out == out || std::filesystem::equivalent(labels_out, out, ec))
    throw InputError(fmt::format("cellgan sample: --labels: '{}' is the --out file: expected another file name",
                                 labels_out));
  return labels_out;
}

}  // namespace

int sample_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("ensemble", po::value<std::string>()->required(), "ensemble.bin of a finished run")(
      "count,n", po::value<std::int64_t>()->default_value(1000), "number of samples")(
      "seed", po::value<std::string>()->default_value("1"), "seed of the latent vectors")(
      "device", po::value<std::string>()->default_value("auto"), kDeviceHelp)(
      "out", po::value<std::string>()->required(), "output: .npy (N x D float32) or .png (grid or scatter)")(
      "config", po::value<std::string>(),
      "the run's config.yaml: a .png is then drawn as the run draws samples.png (toy points over the modes)")(
      "class", po::value<std::int64_t>(),
      "a conditional generator (network dcgan_conditional, or a per_class run with classes.json beside the "
      "ensemble): samples of this class only")(
      "labels", po::value<std::string>(),
      "a conditional generator: also write each sample's class here (.npy, N x 1 float32); without --class a "
      "per_class run draws the classes in proportion to the training data, dcgan_conditional uniformly");
  po::variables_map vm;
  if (!parse_options("sample",
                     "--ensemble FILE --out FILE.npy|FILE.png [-n N] [--config FILE] [--class C] [--labels FILE.npy]",
                     options, nullptr, args, vm))
    return kExitOk;
  const std::string out = vm["out"].as<std::string>();
  const std::int64_t n = int_option(vm, "sample", "count", 1, kMaxSamples, kCountWhy);
  const std::uint64_t seed = seed_option(vm, "sample", "seed");
  const torch::Device device = resolve_device(vm["device"].as<std::string>(), "cellgan sample: --device");
  if (!ends_with(out, ".npy") && !ends_with(out, ".png"))
    throw InputError(fmt::format("cellgan sample: --out: '{}': expected a .npy or .png file name", out));
  check_output_file("sample", "out", out);
  const std::string labels_out = labels_option(vm, out);
  const std::int64_t label = vm.count("class") ? int_option(vm, "sample", "class", 0, kClassCount - 1) : -1;
  torch::set_num_threads(1);
  const std::string path = vm["ensemble"].as<std::string>();
  // A class or labels need a conditional generator: a conditional
  // network's ensemble, or a per_class run's (classes.json beside it).
  const bool by_class = label >= 0 || !labels_out.empty();
  Ensemble ensemble = Ensemble::load(path, device);
  const bool conditional_network = is_conditional(ensemble.shape);
  std::optional<ClassGenerator> classes;
  if (by_class && !conditional_network) {
    ensemble = Ensemble();
    if (!std::filesystem::exists(ClassGenerator::index_path(path)))
      throw InputError(fmt::format("cellgan sample: {}: {} has no classes: expected a per_class run's ensemble (with "
                                   "{} beside it) or a dcgan_conditional network's",
                                   label >= 0 ? "--class" : "--labels", path, run_files::kClassIndex));
    classes = ClassGenerator::load(path, device);
    if (label >= classes->classes())
      throw InputError(fmt::format("cellgan sample: --class: {} is out of range: expected 0..{} (the classes in {})",
                                   label, classes->classes() - 1, ClassGenerator::index_path(path)));
  }
  Ensemble& drawn = classes ? classes->mixture() : ensemble;
  std::optional<Config> config;
  if (vm.count("config")) {
    config = load_config(vm["config"].as<std::string>());
    check_ensemble_matches(*config, drawn, path);
  }
  const std::uint64_t latent_seed = derive_seed(seed, Stream::kEvaluation, 2);
  std::vector<float> labels;
  torch::Tensor samples;
  if (by_class && conditional_network) {
    ClassSamples drawn_samples = sample_conditional(ensemble, n, latent_seed, static_cast<int>(label));
    samples = drawn_samples.samples;
    labels.assign(drawn_samples.labels.begin(), drawn_samples.labels.end());
  } else if (label >= 0) {
    samples = classes->sample_class(static_cast<int>(label), n, latent_seed);
    labels.assign(static_cast<std::size_t>(n), static_cast<float>(label));
  } else if (classes) {
    ClassSamples drawn_samples = classes->sample(n, latent_seed);
    samples = drawn_samples.samples;
    labels.assign(drawn_samples.labels.begin(), drawn_samples.labels.end());
  } else {
    samples = ensemble.sample(n, latent_seed);
  }
  check_drawn_samples(samples, config ? config->data.dataset : kind_of_samples(drawn.shape.data_dim), path);
  const std::int64_t dim = samples.size(1);
  write_samples(out, samples, config);
  if (!labels_out.empty()) write_npy(labels_out, labels, n, 1);
  std::cout << fmt::format("{} samples ({} values each) -> {}{}\n", n, dim, out,
                           labels_out.empty() ? "" : ", their classes -> " + labels_out);
  return kExitOk;
}

int score_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("config", po::value<std::string>()->required(),
                        "configuration naming the dataset and classifier (a run's config.yaml)")(
      "samples", po::value<std::string>(), "a .npy file of samples (N x D float32)")(
      "ensemble", po::value<std::string>(), "an ensemble.bin to sample and score")(
      "count,n", po::value<std::int64_t>(),
      "samples to draw from --ensemble (default: the configuration's evaluation.final_samples, as the run scored it)")(
      "seed", po::value<std::string>(),
      "seed of the latent vectors of --ensemble (default: the configuration's seed, as the run scored it)")(
      "device", po::value<std::string>()->default_value("auto"), kDeviceHelp)(
      "class", po::value<std::int64_t>(),
      "image datasets: also report class_accuracy, the share of the samples the classifier labels C (samples "
      "of one class, e.g. from cellgan sample --class C)");
  po::variables_map vm;
  if (!parse_options("score", "--config FILE (--samples FILE.npy | --ensemble FILE) [--class C]", options, nullptr,
                     args, vm))
    return kExitOk;
  if (vm.count("samples") == vm.count("ensemble"))
    throw InputError("cellgan score: expected exactly one of --samples and --ensemble");
  if (vm.count("samples")) {
    reject_unused(vm, "score", "count", "ensemble");
    reject_unused(vm, "score", "seed", "ensemble");
  }
  const torch::Device device = resolve_device(vm["device"].as<std::string>(), "cellgan score: --device");
  torch::set_num_threads(1);
  const Config config = load_config(vm["config"].as<std::string>());
  // By default an ensemble is scored as its run scored it: the same count
  // and latent vectors, so the same scores. The scores need two samples at
  // least (SampleScorer::report).
  const std::int64_t count = vm.count("count") ? int_option(vm, "score", "count", 2, kMaxSamples, kCountWhy)
                                               : std::max<std::int64_t>(2, config.evaluation.final_samples);
  const std::uint64_t seed = vm.count("seed") ? seed_option(vm, "score", "seed") : config.seed;
  std::string drawn;  // how the samples were drawn, for the output line
  const int label = vm.count("class") ? static_cast<int>(int_option(vm, "score", "class", 0, kClassCount - 1)) : -1;
  if (label >= 0 && is_toy(config.data.dataset))
    throw InputError(fmt::format("cellgan score: --class: dataset {} has no classes: expected an image dataset",
                                 to_string(config.data.dataset)));
  // Samples are images (or 2-D points) whatever the network: a conditional
  // network's label slots are not part of them.
  const std::int64_t dim = sample_dim(config.data.dataset);
  torch::Tensor samples;
  if (vm.count("samples")) {
    const std::string path = vm["samples"].as<std::string>();
    NpyArray array = read_npy(path);
    if (array.cols != dim)
      throw InputError(fmt::format("{}: shape ({}, {}): expected N x {} for dataset {}", path, array.rows,
                                   array.cols, dim, to_string(config.data.dataset)));
    if (array.rows < 2)
      throw InputError(fmt::format("{}: shape ({}, {}): expected at least 2 samples to score", path, array.rows,
                                   array.cols));
    check_sample_values(array.data.data(), array.rows, array.cols, config.data.dataset, path);
    samples = torch::from_blob(array.data.data(), {array.rows, array.cols}, torch::kFloat32).clone();
  } else {
    const std::string path = vm["ensemble"].as<std::string>();
    Ensemble ensemble = Ensemble::load(path, device);
    check_ensemble_matches(config, ensemble, path);
    samples = ensemble.sample(count, derive_seed(seed, Stream::kEvaluation, 0));
    check_drawn_samples(samples, config.data.dataset, path);
    drawn = fmt::format(" (--count {}{}, --seed {}{})", count, vm.count("count") ? "" : ": evaluation.final_samples",
                        seed, vm.count("seed") ? "" : ": the configuration's");
  }
  std::unique_ptr<SampleScorer> scorer = make_scorer(config, device);
  std::string line = fmt::format("{} samples{}:", samples.size(0), drawn);
  for (const auto& [name, value] : scorer->report(samples)) line += fmt::format("  {} {:.4f}", name, value);
  if (label >= 0) {
    ScoreClassifier classifier = load_classifier(classifier_file(config), device);
    line += fmt::format("  class_accuracy {:.4f}", class_accuracy(classifier, samples, label));
  }
  std::cout << line << "\n";
  return kExitOk;
}

}  // namespace cellgan::app
