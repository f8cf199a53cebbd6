// bench_sample_rows OUT.png PER_ROW A.npy [B.npy ...]: one PNG with a row
// of PER_ROW samples from each .npy file (28x28 images in [-1, 1], as
// `cellgan sample --out X.npy` writes them), in the order given. Q3 uses it
// for its picture of every method's samples.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/image_files.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: bench_sample_rows OUT.png PER_ROW A.npy [B.npy ...]\n";
    return 2;
  }
  try {
    const std::string out = argv[1];
    const std::int64_t per_row = std::atoll(argv[2]);
    if (per_row < 1) throw std::runtime_error("PER_ROW: expected a positive count");
    std::vector<float> images;
    for (int i = 3; i < argc; ++i) {
      const cellgan::NpyArray samples = cellgan::read_npy(argv[i]);
      if (samples.cols != cellgan::kImageDim || samples.rows < per_row)
        throw std::runtime_error(std::string(argv[i]) + ": expected at least " + std::to_string(per_row) +
                                 " rows of " + std::to_string(cellgan::kImageDim) + " pixels");
      images.insert(images.end(), samples.data.begin(), samples.data.begin() + per_row * cellgan::kImageDim);
    }
    cellgan::write_image_grid_png(out, images, per_row * (argc - 3), cellgan::kImageSide, cellgan::kImageSide,
                                  per_row);
  } catch (const std::exception& e) {
    std::cerr << "bench_sample_rows: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
