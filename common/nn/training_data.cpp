// Loading a run's training data into a tensor (see training_data.h).
#include "common/nn/training_data.h"

#include <torch/torch.h>

#include "common/dataset.h"
#include "common/rng.h"

namespace cellgan {

torch::Tensor load_training_tensor(const Config& config) {
  if (is_toy(config.data.dataset)) {
    const ToyMixture mixture = toy_mixture(config.data.dataset);
    std::vector<float> points =
        sample_toy(mixture, config.data.toy_samples, derive_seed(config.seed, Stream::kToyData, 0));
    return torch::from_blob(points.data(), {config.data.toy_samples, 2}, torch::kFloat32).clone();
  }
  // The tensor takes over the pixel buffer instead of copying it.
  auto data = std::make_shared<ImageData>(load_image_data(config.data, Split::kTrain));
  return torch::from_blob(
      data->pixels.data(), {data->count, data->dim()}, [data](void*) mutable { data.reset(); },
      torch::TensorOptions().dtype(torch::kFloat32));
}

}  // namespace cellgan
