// A conditional generator made of one ensemble per class (layout
// per_class): class c's samples come from class c's ensemble only.
//
// It is kept as one Ensemble — every class's generators in class order,
// each weighted by its class's share of the training data times its weight
// within the class — plus an index, classes.json beside the ensemble.bin:
//   {"classes": K, "proportions": [p_0..p_K-1],
//    "generators": [[first, count] per class], ...}
// So ensemble.bin alone samples the classes in proportion to the training
// data (Ensemble::sample draws generator by generator, in order), and with
// the index each sample's class is known and one class can be sampled.
//
// Errors: load() throws InputError naming the file when classes.json is
// missing, malformed, or does not match the ensemble.
// Thread-safety: a ClassGenerator belongs to one thread at a time.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/nn/classifier.h"
#include "common/nn/ensemble.h"

namespace cellgan {

struct ClassSamples {
  torch::Tensor samples;             // [n, data_dim]
  std::vector<std::uint8_t> labels;  // n, the class of each row
};

class ClassGenerator {
 public:
  // `per_class[c]` is class c's ensemble (moved in); `proportions` are the
  // classes' shares of the training data (normalised here). Throws
  // std::invalid_argument when the sizes differ, a class has no generator,
  // or the proportions do not sum to more than 0.
  ClassGenerator(std::vector<Ensemble> per_class, std::vector<double> proportions);

  int classes() const { return static_cast<int>(proportions_.size()); }
  const std::vector<double>& proportions() const { return proportions_; }
  // Per class: its first generator in mixture() and how many it has.
  const std::vector<std::pair<std::int64_t, std::int64_t>>& slices() const { return slices_; }
  // All classes as one ensemble (see above); `cell` is -1.
  Ensemble& mixture() { return mixture_; }

  // n samples of class c (0 <= c < classes(), else std::out_of_range).
  torch::Tensor sample_class(int c, std::int64_t n, std::uint64_t seed);
  // n samples of all classes in proportion, with their labels: the same
  // samples as mixture().sample(n, seed).
  ClassSamples sample(std::int64_t n, std::uint64_t seed);

  // classes.json for the index ("the file beside ensemble.bin").
  std::string index_json() const;
  // The index path beside an ensemble file.
  static std::string index_path(const std::string& ensemble_path);
  // Reads ensemble.bin and its classes.json.
  static ClassGenerator load(const std::string& ensemble_path, torch::Device device = torch::kCPU);

 private:
  ClassGenerator() = default;
  Ensemble mixture_;
  std::vector<double> proportions_;
  std::vector<std::pair<std::int64_t, std::int64_t>> slices_;  // per class: first generator, count
};

// n samples of a conditional generator's ensemble (network.kind
// dcgan_conditional, conditional_networks.h), with each sample's class:
// all of class `label`, or (label -1) the classes its latent draws give,
// uniform, and then the same samples as ensemble.sample(n, seed).
// std::invalid_argument when the ensemble is not conditional.
ClassSamples sample_conditional(Ensemble& ensemble, std::int64_t n, std::uint64_t seed, int label = -1);

// The fraction of `samples` ([n, 784] images) that the score classifier
// labels `label`: how well a class's generator makes its class.
double class_accuracy(ScoreClassifier& classifier, const torch::Tensor& samples, int label);

}  // namespace cellgan
