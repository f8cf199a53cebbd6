// Scores of generated samples (docs/operations.md, "Data and the classifier"), computed by cellgan's own code.
//
// - FID: Frechet distance between Gaussians fitted (float64) to features of
//   real and generated samples; the matrix square root is symmetric and
//   stable (eigen-decomposition):
//     d = |m1 - m2|^2 + tr(S1) + tr(S2) - 2 tr( sqrt( sqrt(S1) S2 sqrt(S1) ) )
//   For images the features are the classifier's 10-d logits; for the toy
//   data they are the 2-D points themselves.
// - TVD: 1/2 sum_c |p_real(c) - p_gen(c)| over the classifier's argmax labels.
// - IS:  exp(E_x KL(p(y|x) || p(y))) over the classifier's softmax.
// - classes_covered: how many of the 10 classes hold at least 1% of the
//   samples' argmax labels (a collapsed generator covers few).
// - Toy data: the mode metrics of common/dataset.h, and the Frechet
//   distance of the raw points as "frechet_2d" (a 2-D Gaussian fit, so it
//   cannot see modes: blobs score well; not an FID, which needs a
//   classifier's features).
//
// The objective is the one score that the mixture-weight ES and the
// master's choice of the best ensemble minimise: "fid" for images, and
// "mode_tvd" (common/dataset.h) for the toy data, which rewards samples
// that are both on a mode and spread evenly over the modes.
//
// A SampleScorer computes the real statistics once, at construction, and
// keeps them. It is made once per process and passed by reference.
//
// Thread-safety: a scorer belongs to one thread at a time.
#pragma once

#include <torch/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"

namespace cellgan {

struct GaussianStats {
  torch::Tensor mean;  // [d], float64
  torch::Tensor cov;   // [d, d], float64
};
GaussianStats fit_gaussian(const torch::Tensor& features);
double frechet_distance(const GaussianStats& a, const GaussianStats& b);

class SampleScorer {
 public:
  virtual ~SampleScorer() = default;
  // The objective (lower is better); report() holds the same value under
  // objective_name(). samples: [N, data_dim] with N >= 2, else both throw
  // std::invalid_argument.
  virtual double objective(const torch::Tensor& samples) = 0;
  // Every metric, by name: images {"fid","tvd","is","classes_covered"}; toy {"frechet_2d",
  // "mode_tvd","modes_covered","mode_count","high_quality","reverse_kl"}.
  virtual std::map<std::string, double> report(const torch::Tensor& samples) = 0;
  // What the scores are computed from, a row per sample: the classifier's
  // logits [N, 10] (float64, on its device) for images, the points [N, 2]
  // (on the CPU) for toy data. Rows can be computed apart and joined:
  // report_features(cat(features(a), features(b))) is report(cat(a, b)).
  // features() takes N >= 1 rows; report_features() needs N >= 2.
  virtual torch::Tensor features(const torch::Tensor& samples) = 0;
  virtual std::map<std::string, double> report_features(const torch::Tensor& features) = 0;
  // report_features() of each of `features`, in order, computed together:
  // the image scorer fits every Gaussian, histogram and IS with batched
  // operations on its device and brings them to the host in one copy (a
  // GPU then waits once, not four times a report), each report equal to
  // its own to float64 rounding; the toy scorer reports one by one.
  virtual std::vector<std::map<std::string, double>> report_features_together(
      const std::vector<torch::Tensor>& features);
};

// The key of the objective in SampleScorer::report(): "fid" or "mode_tvd".
std::string objective_name(const Config& config);

// The score classifier's file: evaluation.classifier, or
// <data folder>/classifier.pt when that is empty.
std::string classifier_file(const Config& config);

// Where the real training images' statistics (FID's) are cached, beside
// the classifier: <classifier>.stats.pt, .stats-cuda.pt for a GPU's, with
// -limit-N before .pt for data.train_limit N.
std::string real_stats_cache(const std::string& classifier_path, const DataConfig& data, const torch::Device& device);

// Loads what the configuration's dataset needs (the classifier and the
// real training data for images; the mixture for toy data). Throws
// InputError naming the missing file.
// Image scorers run their classifier on `device` (samples anywhere are
// moved there); the toy scorer counts modes on the CPU.
std::unique_ptr<SampleScorer> make_scorer(const Config& config, torch::Device device = torch::kCPU);

}  // namespace cellgan
