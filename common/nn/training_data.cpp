// The training data of a run (see training_data.h).
#include "common/nn/training_data.h"

#include <torch/torch.h>

#include <memory>
#include <stdexcept>

#include "common/dataset.h"
#include "common/rng.h"

namespace cellgan {

TrainingData::TrainingData(const Config& config, torch::Device device) : TrainingData(config, -1, device) {}

TrainingData::TrainingData(const Config& config, int label, torch::Device device) {
  if (label >= 0 && (is_toy(config.data.dataset) || label >= kClassCount))
    throw std::invalid_argument("TrainingData: a class's data needs an image dataset and a label in 0..9");
  if (is_toy(config.data.dataset)) {
    const ToyMixture mixture = toy_mixture(config.data.dataset);
    std::vector<float> points =
        sample_toy(mixture, config.data.toy_samples, derive_seed(config.seed, Stream::kToyData, 0));
    stored_ = torch::from_blob(points.data(), {config.data.toy_samples, 2}, torch::kFloat32).clone().to(device);
    return;
  }
  // The tensor takes over the pixel buffer instead of copying it.
  auto bytes = std::make_shared<ImageBytes>(load_image_bytes(config.data, Split::kTrain));
  stored_ = torch::from_blob(
      bytes->pixels.data(), {bytes->count, bytes->dim()}, [bytes](void*) mutable { bytes.reset(); },
      torch::TensorOptions().dtype(torch::kUInt8));
  const torch::Tensor labels = torch::from_blob(bytes->labels.data(), {bytes->count}, torch::kUInt8);
  if (label >= 0) stored_ = stored_.index_select(0, labels.eq(label).nonzero().flatten());  // a copy
  if (config.network.kind == NetworkKind::kDcganConditional && label < 0) labels_ = labels.to(torch::kLong);
  values_ = torch::empty({256}, torch::kFloat32);
  float* v = values_.data_ptr<float>();
  for (int p = 0; p < 256; ++p) v[p] = pixel_value(static_cast<std::uint8_t>(p));
  if (!device.is_cpu()) {
    stored_ = stored_.to(device);
    values_ = values_.to(device);
    if (labels_.defined()) labels_ = labels_.to(device);
  }
}

torch::Tensor TrainingData::rows(const torch::Tensor& index) const {
  const torch::Tensor selected = stored_.index_select(0, index);
  if (!values_.defined()) return selected;
  const torch::Tensor images = values_.index_select(0, selected.flatten().to(torch::kLong)).view(selected.sizes());
  if (!labels_.defined()) return images;
  return torch::cat({images, torch::one_hot(labels_.index_select(0, index), kClassCount).to(torch::kFloat32)}, 1);
}

}  // namespace cellgan
