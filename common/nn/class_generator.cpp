// A conditional generator of one ensemble per class (see class_generator.h).
#include "common/nn/class_generator.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/nn/conditional_networks.h"
#include "common/run_files.h"

namespace cellgan {
namespace {

std::vector<double> normalised(std::vector<double> w) {
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  if (!(sum > 0.0)) throw std::invalid_argument("ClassGenerator: the class proportions must sum to more than 0");
  for (double& x : w) x /= sum;
  return w;
}

}  // namespace

ClassGenerator::ClassGenerator(std::vector<Ensemble> per_class, std::vector<double> proportions)
    : proportions_(normalised(std::move(proportions))) {
  if (per_class.size() != proportions_.size() || per_class.empty())
    throw std::invalid_argument("ClassGenerator: one ensemble per class proportion");
  mixture_.shape = per_class.front().shape;
  mixture_.cell = -1;
  for (std::size_t c = 0; c < per_class.size(); ++c) {
    Ensemble& e = per_class[c];
    if (e.generators.empty()) throw std::invalid_argument(fmt::format("ClassGenerator: class {} has no generator", c));
    slices_.emplace_back(static_cast<std::int64_t>(mixture_.generators.size()),
                         static_cast<std::int64_t>(e.generators.size()));
    for (std::size_t i = 0; i < e.generators.size(); ++i) {
      mixture_.generators.push_back(std::move(e.generators[i]));
      mixture_.weights.push_back(proportions_[c] * e.weights[i]);
    }
  }
}

torch::Tensor ClassGenerator::sample_class(int c, std::int64_t n, std::uint64_t seed) {
  if (c < 0 || c >= classes())
    throw std::out_of_range(fmt::format("class {} of a generator of classes 0..{}", c, classes() - 1));
  const auto [first, count] = slices_[static_cast<std::size_t>(c)];
  std::vector<Individual*> generators;
  std::vector<double> weights;
  for (std::int64_t i = first; i < first + count; ++i) {
    generators.push_back(&mixture_.generators[static_cast<std::size_t>(i)]);
    weights.push_back(mixture_.weights[static_cast<std::size_t>(i)]);
  }
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  return sample_mixture(generators, normalised(weights), n, gen);
}

ClassSamples ClassGenerator::sample(std::int64_t n, std::uint64_t seed) {
  ClassSamples out;
  out.samples = mixture_.sample(n, seed);
  const std::vector<std::int64_t> counts = Ensemble::sample_counts(mixture_.weights, n);
  for (std::size_t c = 0; c < slices_.size(); ++c)
    for (std::int64_t i = slices_[c].first; i < slices_[c].first + slices_[c].second; ++i)
      out.labels.insert(out.labels.end(), static_cast<std::size_t>(counts[static_cast<std::size_t>(i)]),
                        static_cast<std::uint8_t>(c));
  return out;
}

std::string ClassGenerator::index_json() const {
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& [first, count] : slices_) slices.push_back({first, count});
  const nlohmann::json index = {{"classes", classes()}, {"proportions", proportions_}, {"generators", slices}};
  return index.dump(2) + "\n";
}

std::string ClassGenerator::index_path(const std::string& ensemble_path) {
  return (std::filesystem::path(ensemble_path).parent_path() / run_files::kClassIndex).string();
}

ClassGenerator ClassGenerator::load(const std::string& ensemble_path, torch::Device device) {
  const std::string path = index_path(ensemble_path);
  std::ifstream in(path);
  if (!in)
    throw InputError(fmt::format("{}: cannot read it: expected the class index of a per_class run beside {}", path,
                                 ensemble_path));
  ClassGenerator g;
  g.mixture_ = Ensemble::load(ensemble_path, device);
  try {
    const nlohmann::json index = nlohmann::json::parse(in);
    g.proportions_ = index.at("proportions").get<std::vector<double>>();
    for (const auto& s : index.at("generators")) g.slices_.emplace_back(s.at(0).get<std::int64_t>(), s.at(1).get<std::int64_t>());
    if (index.at("classes").get<int>() != g.classes()) throw std::runtime_error("classes and proportions differ");
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: not a class index: {}", path, e.what()));
  }
  std::int64_t next = 0;
  for (const auto& [first, count] : g.slices_) {
    if (first != next || count < 1)
      throw InputError(fmt::format("{}: generators: expected consecutive non-empty slices of the ensemble", path));
    next = first + count;
  }
  if (g.slices_.size() != g.proportions_.size() || next != static_cast<std::int64_t>(g.mixture_.generators.size()))
    throw InputError(fmt::format("{}: generators: expected one slice per class covering the {} generators of {}", path,
                                 g.mixture_.generators.size(), ensemble_path));
  return g;
}

ClassSamples sample_conditional(Ensemble& ensemble, std::int64_t n, std::uint64_t seed, int label) {
  if (!is_conditional(ensemble.shape)) throw std::invalid_argument("sample_conditional: not a conditional generator");
  torch::NoGradGuard no_grad;
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  const std::vector<std::int64_t> counts = Ensemble::sample_counts(ensemble.weights, n);
  std::vector<torch::Tensor> parts;
  ClassSamples out;
  for (std::size_t i = 0; i < ensemble.generators.size(); ++i) {  // as sample_mixture draws them
    if (counts[i] == 0) continue;
    Generator& g = ensemble.generators[i].generator();
    const bool was_training = g->is_training();
    g->eval();
    torch::Tensor z = torch::randn({counts[i], g->shape().latent_dim}, gen);
    if (label >= 0) set_latent_label(z, g->shape(), label);
    parts.push_back(image_part(g->forward(z.to(ensemble.generators[i].device())), g->shape()));
    const torch::Tensor labels = latent_labels(z, g->shape()).to(torch::kUInt8).contiguous();
    out.labels.insert(out.labels.end(), labels.data_ptr<std::uint8_t>(), labels.data_ptr<std::uint8_t>() + labels.numel());
    if (was_training) g->train();
  }
  out.samples = torch::cat(parts, 0);
  return out;
}

double class_accuracy(ScoreClassifier& classifier, const torch::Tensor& samples, int label) {
  torch::NoGradGuard no_grad;
  classifier->eval();
  const torch::Tensor predicted = classifier->forward(samples.to(device_of(classifier))).argmax(1);
  return predicted.eq(label).to(torch::kFloat64).mean().item<double>();
}

}  // namespace cellgan
