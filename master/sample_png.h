// One PNG of generated samples, as a run shows them: a grid of 28x28
// images for image data, a scatter plot with the modes marked for the toy
// mixtures. Used for the final samples.png and the per-generation previews.
//
// Thread-safety: a free function; the write is atomic (image_files.h).
#pragma once

#include <string>
#include <vector>

#include "common/config.h"

namespace cellgan {

// `samples` is row-major: n x 784 (images, in [-1, 1]) or n x 2 (toy data).
// Images are tiled ceil(sqrt(n)) to a row. Throws std::invalid_argument if
// the size is not a whole number of samples.
// `title` (label_font.h's characters), when not empty, is drawn above.
void write_samples_png(const Config& config, const std::string& path, const std::vector<float>& samples,
                       const std::string& title = "");

}  // namespace cellgan
