// The score classifier (docs/operations.md, "Data and the classifier"): the small CNN, its deterministic training
// with Adam, atomic saving, loading with clear errors, and accuracy.
//
// Thread-safety: free functions over caller-owned modules and data; a
// module instance belongs to one thread at a time.
#include "common/nn/classifier.h"

#include <torch/torch.h>

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "common/nn/device.h"
#include "common/log.h"
#include "common/rng.h"

namespace cellgan {
namespace {

constexpr std::int64_t kSide = 28;
constexpr std::int64_t kClasses = 10;
constexpr std::int64_t kFlatFeatures = 320;  // 20 channels x 4 x 4
constexpr std::int64_t kHidden = 50;
constexpr std::int64_t kTrainBatch = 64;
constexpr std::int64_t kEvalBatch = 1000;
constexpr double kLearningRate = 1e-3;
constexpr std::int64_t kAccuracyEvery = 5;  // epochs between test accuracy logs

void check_images(const ImageData& data, const char* what) {
  if (data.rows != kSide || data.cols != kSide) {
    throw InputError(fmt::format("classifier: {} images must be 28x28, got {}x{}", what, data.rows, data.cols));
  }
  if (static_cast<std::int64_t>(data.pixels.size()) != data.count * data.dim() ||
      static_cast<std::int64_t>(data.labels.size()) != data.count) {
    throw InputError(fmt::format("classifier: {} data holds {} pixels and {} labels for {} images", what,
                                 data.pixels.size(), data.labels.size(), data.count));
  }
  for (const auto label : data.labels) {
    if (label >= kClasses) throw InputError(fmt::format("classifier: {} label {} is not in 0..9", what, label));
  }
}

// Images [count, 1, 28, 28] float32 and labels [count] int64, copied.
torch::Tensor image_tensor(const ImageData& data) {
  auto* pixels = const_cast<float*>(data.pixels.data());
  return torch::from_blob(pixels, {data.count, 1, kSide, kSide}, torch::kFloat32).clone();
}
torch::Tensor label_tensor(const ImageData& data) {
  auto* labels = const_cast<std::uint8_t*>(data.labels.data());
  return torch::from_blob(labels, {data.count}, torch::kUInt8).to(torch::kInt64);
}

// Fisher-Yates shuffle of 0..n-1 driven by SplitMix64.
void shuffle(std::vector<std::int64_t>& order, SplitMix64& rng) {
  for (std::size_t i = order.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(i));
    std::swap(order[i - 1], order[j]);
  }
}

std::int64_t count_correct(ScoreClassifier& classifier, const torch::Tensor& images, const torch::Tensor& labels) {
  torch::NoGradGuard no_grad;
  classifier->eval();
  std::int64_t correct = 0;
  for (std::int64_t start = 0; start < images.size(0); start += kEvalBatch) {
    const auto end = std::min(start + kEvalBatch, images.size(0));
    const auto predicted = classifier->forward(images.slice(0, start, end).to(device_of(classifier))).argmax(/*dim=*/1);
    correct += predicted.eq(labels.slice(0, start, end).to(predicted.device())).sum().item<std::int64_t>();
  }
  return correct;
}

void save_atomically(ScoreClassifier& classifier, const std::string& path) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string temporary = path + ".tmp";
  const torch::Device device = device_of(classifier);
  classifier->to(torch::kCPU);  // the file does not depend on the device
  torch::save(classifier, temporary);
  classifier->to(device);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error(fmt::format("{}: could not rename {} into place", path, temporary));
  }
}

}  // namespace

ScoreClassifierImpl::ScoreClassifierImpl() {
  namespace nn = torch::nn;
  conv1_ = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 10, /*kernel_size=*/5)));
  conv2_ = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(10, 20, /*kernel_size=*/5)));
  fc1_ = register_module("fc1", nn::Linear(kFlatFeatures, kHidden));
  fc2_ = register_module("fc2", nn::Linear(kHidden, kClasses));
}

torch::Tensor ScoreClassifierImpl::forward(const torch::Tensor& x) {
  torch::Tensor images;
  if (x.dim() == 2 && x.size(1) == kSide * kSide) {
    images = x.reshape({-1, 1, kSide, kSide});
  } else if (x.dim() == 4 && x.size(1) == 1 && x.size(2) == kSide && x.size(3) == kSide) {
    images = x;
  } else {
    throw std::invalid_argument("ScoreClassifier::forward: expected [N, 784] or [N, 1, 28, 28] images");
  }
  auto h = torch::relu(torch::max_pool2d(conv1_->forward(images), /*kernel_size=*/2));
  h = torch::relu(torch::max_pool2d(conv2_->forward(h), /*kernel_size=*/2));
  h = torch::relu(fc1_->forward(h.reshape({-1, kFlatFeatures})));
  return fc2_->forward(h);
}

ClassifierReport train_classifier(const ImageData& train, const ImageData& test, std::int64_t epochs,
                                  std::uint64_t seed, const std::string& path, torch::Device device) {
  check_images(train, "training");
  check_images(test, "test");
  if (train.count < 1 || test.count < 1)
    throw std::invalid_argument("train_classifier: the training and test splits must not be empty");
  if (epochs < 1) throw std::invalid_argument(fmt::format("train_classifier: epochs must be >= 1, got {}", epochs));

  const auto started = std::chrono::steady_clock::now();
  torch::manual_seed(seed);
  ScoreClassifier classifier;
  classifier->to(device);
  torch::optim::Adam optimizer(classifier->parameters(), torch::optim::AdamOptions(kLearningRate));
  SplitMix64 order_rng(seed);

  const auto train_images = image_tensor(train).to(device);
  const auto train_labels = label_tensor(train).to(device);
  const auto test_images = image_tensor(test);
  const auto test_labels = label_tensor(test);
  std::vector<std::int64_t> order(static_cast<std::size_t>(train.count));
  std::iota(order.begin(), order.end(), 0);

  ClassifierReport report;
  for (std::int64_t epoch = 1; epoch <= epochs; ++epoch) {
    classifier->train();
    shuffle(order, order_rng);
    const auto permutation = torch::from_blob(order.data(), {train.count}, torch::kInt64).to(device);
    // The losses stay on the device until the epoch's end.
    std::vector<torch::Tensor> losses;
    for (std::int64_t start = 0; start < train.count; start += kTrainBatch) {
      const auto index = permutation.slice(0, start, std::min(start + kTrainBatch, train.count));
      optimizer.zero_grad();
      const auto logits = classifier->forward(train_images.index_select(0, index));
      auto loss = torch::nn::functional::cross_entropy(logits, train_labels.index_select(0, index));
      loss.backward();
      optimizer.step();
      losses.push_back(loss.detach());
    }
    double loss_sum = 0.0;
    for (double loss : host_values(losses)) loss_sum += loss;
    const auto batches = static_cast<std::int64_t>(losses.size());
    const bool last = epoch == epochs;
    if (last || epoch % kAccuracyEvery == 0) {
      report.test_accuracy =
          static_cast<double>(count_correct(classifier, test_images, test_labels)) / static_cast<double>(test.count);
      log::info("classifier epoch {}/{}: loss {:.4f}, test accuracy {:.4f}", epoch, epochs,
                loss_sum / static_cast<double>(batches), report.test_accuracy);
    } else {
      log::info("classifier epoch {}/{}: loss {:.4f}", epoch, epochs, loss_sum / static_cast<double>(batches));
    }
  }
  save_atomically(classifier, path);
  report.epochs = epochs;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log::info("classifier saved to {}: test accuracy {:.4f} after {} epochs ({:.1f} s)", path, report.test_accuracy,
            epochs, report.seconds);
  return report;
}

ScoreClassifier load_classifier(const std::string& path, torch::Device device) {
  if (!std::filesystem::is_regular_file(path)) {
    throw InputError(fmt::format("{}: no score classifier there (run: cellgan classifier)", path));
  }
  ScoreClassifier classifier;
  try {
    torch::load(classifier, path);
  } catch (const c10::Error& e) {
    std::string reason = e.what_without_backtrace();
    reason = reason.substr(0, reason.find('\n'));
    throw InputError(
        fmt::format("{}: not a readable score classifier ({}); run: cellgan classifier", path, reason));
  } catch (const std::exception& e) {
    throw InputError(
        fmt::format("{}: not a readable score classifier ({}); run: cellgan classifier", path, e.what()));
  }
  classifier->to(device);
  classifier->eval();
  return classifier;
}

torch::Device device_of(ScoreClassifier& classifier) { return classifier->parameters().front().device(); }

double classifier_accuracy(ScoreClassifier& classifier, const ImageData& data) {
  check_images(data, "evaluation");
  if (data.count == 0) return 0.0;
  return static_cast<double>(count_correct(classifier, image_tensor(data), label_tensor(data))) /
         static_cast<double>(data.count);
}

}  // namespace cellgan
