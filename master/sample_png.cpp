// The PNG of a run's samples (see sample_png.h).
#include "master/sample_png.h"

#include <cstdint>
#include <stdexcept>

#include "common/dataset.h"
#include "common/image_files.h"

namespace cellgan {

void write_samples_png(const Config& config, const std::string& path, const std::vector<float>& samples,
                       const std::string& title) {
  const bool toy = is_toy(config.data.dataset);
  const auto dim = static_cast<std::size_t>(sample_dim(config.data.dataset));
  if (samples.empty() || samples.size() % dim != 0)
    throw std::invalid_argument(path + ": expected a whole number of samples of " + std::to_string(dim) + " values");
  if (toy) {
    const ToyMixture mixture = toy_mixture(config.data.dataset);
    write_scatter_png(path, samples, mixture.modes, config.data.dataset == DatasetKind::kRing ? 3.0f : 6.0f, 512,
                      ImageLabels{title, {}});
    return;
  }
  const auto count = static_cast<std::int64_t>(samples.size() / dim);
  write_image_grid_png(path, samples, count, kImageSide, kImageSide, square_grid_width(count), ImageLabels{title, {}});
}

}  // namespace cellgan
