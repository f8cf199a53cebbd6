// Scores of generated samples (docs/operations.md, "Data and the classifier"): Gaussian fits and the Frechet
// distance, the classifier-based image scorer (FID, TVD, IS) with its real
// statistics cached on disk beside the classifier, and the toy scorer (FID
// on 2-D points plus the mode metrics).
//
// Thread-safety: fit_gaussian and frechet_distance are pure; a scorer
// belongs to one thread at a time. The statistics cache is written
// atomically under a per-process temporary name, so ranks that build
// scorers at the same time never see a partial file.
#include "common/nn/scores.h"

#include <torch/torch.h>
#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <stdexcept>
#include <vector>

#include "common/dataset.h"
#include "common/error.h"
#include "common/log.h"
#include "common/nn/classifier.h"
#include "common/rng.h"

namespace cellgan {
namespace {

constexpr std::int64_t kClasses = 10;
// Images per classifier forward pass. On the CPU its im2col buffers grow
// with it (about 6 MB at 100, 17 MB at 250, on a worker's peak); the logits
// do not. On a GPU a pass is a dozen launches whatever its rows, so it takes
// many more (about 100 MB of activations at 4,096): a worker's mixtures of
// 16,000 rows then take 4 passes, not 160.
constexpr std::int64_t kScoreBatch = 100;
constexpr std::int64_t kScoreBatchOnGpu = 4096;
constexpr std::int64_t kToyRealSamples = 20000;
constexpr std::uint64_t kToyRealIndex = 999999;
constexpr double kProbabilityFloor = 1e-30;
constexpr double kCoveredClassShare = 0.01;  // classes_covered counts classes with >= 1% of the samples
constexpr std::int64_t kCacheVersion = 1;

// ---- Linear algebra -------------------------------------------------------

// Eigenvalues of a symmetrised matrix, tiny negative ones (round-off on a
// positive semi-definite matrix) clamped to 0.
std::tuple<torch::Tensor, torch::Tensor> psd_eigh(const torch::Tensor& m) {
  auto [values, vectors] = torch::linalg_eigh(0.5 * (m + m.t()));
  return {values.clamp_min(0.0), vectors};
}

torch::Tensor symmetric_sqrt(const torch::Tensor& m) {
  auto [values, vectors] = psd_eigh(m);
  return vectors.mm(torch::diag(values.sqrt())).mm(vectors.t());
}

// ---- Stable file and data hashes (FNV-1a, 64 bit) ---------------------------

class Fnv1a {
 public:
  void add(const char* data, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) {
      state_ ^= static_cast<unsigned char>(data[i]);
      state_ *= 0x100000001B3ULL;
    }
  }
  void add(const std::string& text) { add(text.data(), text.size() + 1); }  // with its terminator
  void add(std::uint64_t value) { add(reinterpret_cast<const char*>(&value), sizeof value); }
  // Adds the file's bytes; returns false when it cannot be read.
  bool add_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::vector<char> buffer(1 << 16);
    while (in) {
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      add(buffer.data(), static_cast<std::size_t>(in.gcount()));
    }
    return true;
  }
  std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = 0xCBF29CE484222325ULL;
};

// What the real statistics depend on in the data: the training files'
// names and bytes, and the training-image limit.
std::uint64_t training_data_hash(const DataConfig& data) {
  Fnv1a hash;
  hash.add(static_cast<std::uint64_t>(data.train_limit));
  const std::string folder = dataset_folder(data);
  for (const char* base : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"}) {
    for (const char* suffix : {"", ".gz"}) {
      const std::string name = std::string(base) + suffix;
      hash.add(name);
      hash.add(static_cast<std::uint64_t>(hash.add_file(folder + "/" + name) ? 1 : 0));
    }
  }
  return hash.value();
}

// ---- Features --------------------------------------------------------------

// float32 samples on `device`: at least 2 to be scored, 1 for their features.
torch::Tensor checked_samples(const torch::Tensor& samples, std::int64_t dim, const char* who,
                              torch::Device device, std::int64_t min_rows = 2) {
  if (samples.dim() != 2 || samples.size(1) != dim || samples.size(0) < min_rows) {
    throw std::invalid_argument(fmt::format("{}: expected samples [N >= {}, {}]", who, min_rows, dim));
  }
  return samples.detach().to(torch::TensorOptions().device(device).dtype(torch::kFloat32)).contiguous();
}

// Classifier logits [N, 10] (float64) of images [N, 784], in batches, on
// the classifier's device.
torch::Tensor classifier_logits(ScoreClassifier& classifier, const torch::Tensor& images) {
  torch::NoGradGuard no_grad;
  classifier->eval();
  const torch::Device device = device_of(classifier);
  const std::int64_t rows = device.is_cpu() ? kScoreBatch : kScoreBatchOnGpu;
  std::vector<torch::Tensor> parts;
  for (std::int64_t start = 0; start < images.size(0); start += rows)
    parts.push_back(classifier->forward(images.slice(0, start, std::min(start + rows, images.size(0))).to(device)));
  return torch::cat(parts).to(torch::kFloat64);
}

// Fractions of argmax labels, [10] float64.
torch::Tensor label_histogram(const torch::Tensor& logits) {
  const auto counts = torch::bincount(logits.argmax(/*dim=*/1), /*weights=*/{}, /*minlength=*/kClasses);
  return counts.to(torch::kFloat64) / static_cast<double>(logits.size(0));
}

// ---- Real image statistics and their cache ------------------------------------

struct RealImageStats {
  GaussianStats gaussian;
  torch::Tensor labels;  // label histogram [10], float64
  std::int64_t count = 0;
};

struct CacheKey {
  std::uint64_t classifier_hash = 0;
  std::uint64_t data_hash = 0;
};

torch::Tensor scalar(std::uint64_t value) { return torch::tensor(static_cast<std::int64_t>(value), torch::kInt64); }

bool matches(const torch::Tensor& stored, std::uint64_t expected) {
  return stored.defined() && stored.numel() == 1 &&
         stored.item<std::int64_t>() == static_cast<std::int64_t>(expected);
}

// The cached statistics when the cache exists, is readable and was made
// from the same classifier and data; otherwise false.
bool load_cached_stats(const std::string& path, const CacheKey& key, RealImageStats& out) {
  if (!std::filesystem::is_regular_file(path)) return false;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::Tensor version, classifier_hash, data_hash, count;
    archive.read("version", version);
    archive.read("classifier_hash", classifier_hash);
    archive.read("data_hash", data_hash);
    archive.read("count", count);
    if (!matches(version, kCacheVersion) || !matches(classifier_hash, key.classifier_hash) ||
        !matches(data_hash, key.data_hash)) {
      log::info("{}: stale real statistics (classifier or data changed); recomputing", path);
      return false;
    }
    RealImageStats stats;
    archive.read("mean", stats.gaussian.mean);
    archive.read("cov", stats.gaussian.cov);
    archive.read("labels", stats.labels);
    stats.count = count.item<std::int64_t>();
    if (stats.gaussian.mean.sizes() != torch::IntArrayRef{kClasses} ||
        stats.gaussian.cov.sizes() != torch::IntArrayRef{kClasses, kClasses} ||
        stats.labels.sizes() != torch::IntArrayRef{kClasses} || stats.count < 2) {
      log::warn("{}: malformed real statistics; recomputing", path);
      return false;
    }
    stats.gaussian.mean = stats.gaussian.mean.to(torch::kCPU, torch::kFloat64);
    stats.gaussian.cov = stats.gaussian.cov.to(torch::kCPU, torch::kFloat64);
    stats.labels = stats.labels.to(torch::kCPU, torch::kFloat64);
    out = std::move(stats);
    return true;
  } catch (const std::exception& e) {
    std::string reason = e.what();
    log::warn("{}: unreadable real statistics ({}); recomputing", path, reason.substr(0, reason.find('\n')));
    return false;
  }
}

// Best effort: a read-only folder only costs a recomputation next time.
void save_cached_stats(const std::string& path, const CacheKey& key, const RealImageStats& stats) {
  const std::string temporary = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
  try {
    torch::serialize::OutputArchive archive;
    archive.write("version", scalar(kCacheVersion));
    archive.write("classifier_hash", scalar(key.classifier_hash));
    archive.write("data_hash", scalar(key.data_hash));
    archive.write("count", scalar(static_cast<std::uint64_t>(stats.count)));
    archive.write("mean", stats.gaussian.mean);
    archive.write("cov", stats.gaussian.cov);
    archive.write("labels", stats.labels);
    archive.save_to(temporary);
    if (std::rename(temporary.c_str(), path.c_str()) != 0) throw std::runtime_error("rename failed");
  } catch (const std::exception& e) {
    std::remove(temporary.c_str());
    std::string reason = e.what();
    log::warn("{}: could not cache the real statistics ({})", path, reason.substr(0, reason.find('\n')));
  }
}

RealImageStats compute_real_stats(ScoreClassifier& classifier, const DataConfig& data) {
  const ImageData train = load_image_data(data, Split::kTrain);
  if (train.dim() != kImageDim) {
    throw InputError(fmt::format("{}: the score classifier needs 28x28 images, got {}x{}", dataset_folder(data),
                                 train.rows, train.cols));
  }
  if (train.count < 2) {
    throw InputError(fmt::format("{}: need at least 2 training images for the real statistics, got {}",
                                 dataset_folder(data), train.count));
  }
  auto* pixels = const_cast<float*>(train.pixels.data());
  const auto images = torch::from_blob(pixels, {train.count, kImageDim}, torch::kFloat32);
  const auto logits = classifier_logits(classifier, images);
  const GaussianStats g = fit_gaussian(logits);
  return RealImageStats{{g.mean.to(torch::kCPU), g.cov.to(torch::kCPU)}, label_histogram(logits).to(torch::kCPU),
                        train.count};
}

}  // namespace

std::string real_stats_cache(const std::string& classifier_path, const DataConfig& data, const torch::Device& device) {
  // The statistics of a GPU's classifier differ from the CPU's in the last
  // bits: each device has its own cache, so a CPU run never reads a GPU's.
  // A subset of the training images has its own, so that runs on the whole
  // set and quick runs on a few do not overwrite each other's.
  std::string path = classifier_path + (device.is_cuda() ? ".stats-cuda" : ".stats");
  if (data.train_limit > 0) path += fmt::format("-limit-{}", data.train_limit);
  return path + ".pt";
}

namespace {

RealImageStats real_image_stats(ScoreClassifier& classifier, const std::string& classifier_path,
                                const DataConfig& data) {
  CacheKey key;
  Fnv1a classifier_hash;
  classifier_hash.add_file(classifier_path);
  key.classifier_hash = classifier_hash.value();
  key.data_hash = training_data_hash(data);
  const std::string cache_path = real_stats_cache(classifier_path, data, device_of(classifier));

  RealImageStats stats;
  if (load_cached_stats(cache_path, key, stats)) {
    log::info("real statistics of {} images loaded from {}", stats.count, cache_path);
    return stats;
  }
  stats = compute_real_stats(classifier, data);
  log::info("real statistics computed from {} training images of {}", stats.count, dataset_folder(data));
  save_cached_stats(cache_path, key, stats);
  return stats;
}

// ---- Scorers ------------------------------------------------------------------

class ImageScorer final : public SampleScorer {
 public:
  ImageScorer(ScoreClassifier classifier, RealImageStats real)
      : classifier_(std::move(classifier)), real_(std::move(real)) {}

  double objective(const torch::Tensor& samples) override {
    return frechet_distance(fit_gaussian(logits(checked(samples))), real_.gaussian);
  }

  std::map<std::string, double> report(const torch::Tensor& samples) override {
    return report_features(logits(checked(samples)));
  }

  torch::Tensor features(const torch::Tensor& samples) override { return logits(samples); }

  std::vector<std::map<std::string, double>> report_features_together(
      const std::vector<torch::Tensor>& features) override {
    for (const torch::Tensor& l : features) check_features(l);
    const bool same_rows = std::all_of(features.begin(), features.end(),
                                       [&](const torch::Tensor& l) { return l.size(0) == features.front().size(0); });
    if (features.size() < 2 || !same_rows) return SampleScorer::report_features_together(features);
    torch::NoGradGuard no_grad;
    const auto l = torch::stack(features).to(torch::kFloat64);  // [B, N, 10]
    const auto b = l.size(0);
    const auto n = l.size(1);
    const auto mean = l.mean(/*dim=*/1);  // [B, 10]
    const auto centred = l - mean.unsqueeze(1);
    const auto cov = torch::bmm(centred.transpose(1, 2), centred) / static_cast<double>(n - 1);  // [B, 10, 10]
    const auto labels =
        torch::one_hot(l.argmax(/*dim=*/2), kClasses).sum(/*dim=*/1).to(torch::kFloat64) / static_cast<double>(n);
    const auto log_p = torch::log_softmax(l, /*dim=*/2);
    const auto p = log_p.exp();
    const auto log_marginal = p.mean(/*dim=*/1, /*keepdim=*/true).clamp_min(kProbabilityFloor).log();
    const auto is = ((p * (log_p - log_marginal)).sum(/*dim=*/2)).mean(/*dim=*/1).exp();  // [B]
    // One copy to the host: [B, 10 + 100 + 10 + 1].
    const auto host = torch::cat({mean, cov.reshape({b, -1}), labels, is.unsqueeze(1)}, /*dim=*/1).to(torch::kCPU);
    std::vector<std::map<std::string, double>> reports;
    for (std::int64_t i = 0; i < b; ++i) {
      const auto row = host[i];
      const GaussianStats fitted{row.narrow(0, 0, kClasses),
                                 row.narrow(0, kClasses, kClasses * kClasses).view({kClasses, kClasses})};
      reports.push_back(report_of(fitted, row.narrow(0, kClasses + kClasses * kClasses, kClasses),
                                  row[kClasses + kClasses * kClasses + kClasses].item<double>()));
    }
    return reports;
  }

  std::map<std::string, double> report_features(const torch::Tensor& l) override {
    check_features(l);
    const auto labels = label_histogram(l).to(torch::kCPU);
    const auto log_p = torch::log_softmax(l, /*dim=*/1);
    const auto p = log_p.exp();
    const auto log_marginal = p.mean(/*dim=*/0).clamp_min(kProbabilityFloor).log();
    const auto kl = (p * (log_p - log_marginal)).sum(/*dim=*/1);
    return report_of(fit_gaussian(l), labels, std::exp(kl.mean().item<double>()));
  }

 private:
  // The report of generated features from their Gaussian, their label
  // histogram ([10] float64, on the CPU) and their IS.
  std::map<std::string, double> report_of(const GaussianStats& fitted, const torch::Tensor& labels, double is) const {
    return {{"fid", frechet_distance(fitted, real_.gaussian)},
            {"tvd", 0.5 * (labels - real_.labels).abs().sum().item<double>()},
            {"is", is},
            {"classes_covered", (labels >= kCoveredClassShare).sum().item<double>()}};
  }
  static void check_features(const torch::Tensor& l) {
    if (l.dim() != 2 || l.size(1) != kClasses || l.size(0) < 2)
      throw std::invalid_argument("ImageScorer: expected features [N >= 2, 10]");
  }
  torch::Tensor logits(const torch::Tensor& samples) {
    return classifier_logits(classifier_,
                             checked_samples(samples, kImageDim, "ImageScorer", device_of(classifier_), /*min_rows=*/1));
  }
  torch::Tensor checked(const torch::Tensor& samples) {
    return checked_samples(samples, kImageDim, "ImageScorer", device_of(classifier_));
  }

  ScoreClassifier classifier_;
  RealImageStats real_;
};

class ToyScorer final : public SampleScorer {
 public:
  explicit ToyScorer(const Config& config) : mixture_(toy_mixture(config.data.dataset)) {
    auto points = sample_toy(mixture_, kToyRealSamples, derive_seed(config.seed, Stream::kToyData, kToyRealIndex));
    real_ = fit_gaussian(torch::from_blob(points.data(), {kToyRealSamples, 2}, torch::kFloat32));
  }

  double objective(const torch::Tensor& samples) override {
    return modes(checked_samples(samples, 2, "ToyScorer", torch::kCPU)).mode_tvd;
  }

  torch::Tensor features(const torch::Tensor& samples) override {
    return checked_samples(samples, 2, "ToyScorer", torch::kCPU, /*min_rows=*/1);
  }

  std::map<std::string, double> report(const torch::Tensor& samples) override {
    return report_features(checked_samples(samples, 2, "ToyScorer", torch::kCPU));
  }

  std::map<std::string, double> report_features(const torch::Tensor& features) override {
    const auto points = checked_samples(features, 2, "ToyScorer", torch::kCPU);
    const ModeReport modes = this->modes(points);
    return {{"frechet_2d", frechet_distance(fit_gaussian(points), real_)},
            {"mode_tvd", modes.mode_tvd},
            {"modes_covered", static_cast<double>(modes.modes_covered)},
            {"mode_count", static_cast<double>(modes.mode_count)},
            {"high_quality", modes.high_quality_fraction},
            {"reverse_kl", modes.reverse_kl}};
  }

 private:
  // `points` as checked_samples() returns them.
  ModeReport modes(const torch::Tensor& points) const {
    const std::vector<float> flat(points.data_ptr<float>(), points.data_ptr<float>() + points.numel());
    return score_modes(mixture_, flat);
  }

  ToyMixture mixture_;
  GaussianStats real_;
};

}  // namespace

GaussianStats fit_gaussian(const torch::Tensor& features) {
  if (features.dim() != 2 || features.size(0) < 2) {
    throw std::invalid_argument("fit_gaussian: expected features [N >= 2, d]");
  }
  torch::NoGradGuard no_grad;
  const auto f = features.detach().to(torch::kFloat64);
  const auto mean = f.mean(/*dim=*/0);
  const auto centred = f - mean;
  const auto cov = centred.t().mm(centred) / static_cast<double>(f.size(0) - 1);
  return GaussianStats{mean, cov};
}

double frechet_distance(const GaussianStats& a, const GaussianStats& b) {
  if (a.mean.dim() != 1 || b.mean.sizes() != a.mean.sizes() || a.cov.dim() != 2 ||
      a.cov.size(0) != a.mean.size(0) || a.cov.size(1) != a.mean.size(0) || b.cov.sizes() != a.cov.sizes()) {
    throw std::invalid_argument("frechet_distance: statistics of different or malformed dimensions");
  }
  torch::NoGradGuard no_grad;
  // A few numbers (d = 10 for images): the rest is done on the CPU.
  const auto cov_a = a.cov.to(torch::kCPU, torch::kFloat64);
  const auto cov_b = b.cov.to(torch::kCPU, torch::kFloat64);
  const auto diff = a.mean.to(torch::kCPU, torch::kFloat64) - b.mean.to(torch::kCPU, torch::kFloat64);
  const auto root_a = symmetric_sqrt(cov_a);
  // tr sqrt(sqrt(A) B sqrt(A)): the sum of the square roots of its eigenvalues.
  const auto inner_values = std::get<0>(psd_eigh(root_a.mm(cov_b).mm(root_a)));
  const double distance = diff.dot(diff).item<double>() + cov_a.trace().item<double>() +
                          cov_b.trace().item<double>() - 2.0 * inner_values.sqrt().sum().item<double>();
  return std::max(distance, 0.0);
}

std::vector<std::map<std::string, double>> SampleScorer::report_features_together(
    const std::vector<torch::Tensor>& features) {
  std::vector<std::map<std::string, double>> reports;
  for (const torch::Tensor& f : features) reports.push_back(report_features(f));
  return reports;
}

std::string objective_name(const Config& config) { return is_toy(config.data.dataset) ? "mode_tvd" : "fid"; }

std::string classifier_file(const Config& config) {
  return config.evaluation.classifier.empty() ? dataset_folder(config.data) + "/classifier.pt"
                                              : config.evaluation.classifier;
}

std::unique_ptr<SampleScorer> make_scorer(const Config& config, torch::Device device) {
  if (is_toy(config.data.dataset)) return std::make_unique<ToyScorer>(config);
  check_image_files(config.data);  // a missing dataset is named before its classifier
  const std::string classifier_path = classifier_file(config);
  auto classifier = load_classifier(classifier_path, device);
  auto real = real_image_stats(classifier, classifier_path, config.data);
  return std::make_unique<ImageScorer>(std::move(classifier), std::move(real));
}

}  // namespace cellgan
