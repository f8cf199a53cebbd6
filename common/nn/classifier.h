// The score classifier (docs/operations.md, "Data and the classifier"): a small CNN trained by cellgan on a
// dataset's training split, whose fc2 logits and argmax labels give FID,
// TVD and IS for 28x28 images.
//
//   conv(1->10, k5) -> maxpool 2 -> ReLU -> conv(10->20, k5) -> maxpool 2
//   -> ReLU -> fc 320->50 -> ReLU -> fc 50->10 (logits)
//
// Thread-safety: a module instance belongs to one thread at a time.
#pragma once

#include <torch/nn.h>

#include <string>

#include "common/dataset.h"

namespace cellgan {

class ScoreClassifierImpl : public torch::nn::Module {
 public:
  ScoreClassifierImpl();
  // x: [N, 784] or [N, 1, 28, 28] in [-1, 1]; returns logits [N, 10].
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(ScoreClassifier);

struct ClassifierReport {
  std::int64_t epochs = 0;
  double test_accuracy = 0.0;  // in [0, 1]
  double seconds = 0.0;
};

// Trains with Adam (lr 1e-3, batch 64) for `epochs` over `train`, reports
// the accuracy on `test`, and saves the module to `path` atomically.
// Deterministic for a given seed. Logs progress per epoch. Throws
// InputError if the images are not 28x28 or a label is not in 0..9 (the
// data's fault), std::invalid_argument if epochs < 1 or a split is empty
// (the caller's: the command line and the loaders check those). Trains on
// `device`; the weights are drawn on the CPU first, and the file holds CPU
// tensors whatever the device.
ClassifierReport train_classifier(const ImageData& train, const ImageData& test, std::int64_t epochs,
                                  std::uint64_t seed, const std::string& path, torch::Device device = torch::kCPU);

// The classifier of `path`, on `device`. Throws InputError naming `path`
// (and "run: cellgan classifier") if the file is missing or unreadable.
ScoreClassifier load_classifier(const std::string& path, torch::Device device = torch::kCPU);

// The device a classifier's weights are on.
torch::Device device_of(ScoreClassifier& classifier);

// Fraction of `data` the classifier labels correctly.
double classifier_accuracy(ScoreClassifier& classifier, const ImageData& data);

}  // namespace cellgan
