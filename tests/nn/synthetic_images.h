// Test helper: a synthetic 10-class dataset of 28x28 images that a small
// CNN learns in one or two epochs, so classifier and scorer tests do not
// need a real dataset. Class c is a bright 5x5 square at one of ten places
// (two rows of five), jittered by one pixel, over dim uniform noise.
//
// Thread-safety: pure function of its arguments.
#pragma once

#include <cstdint>
#include <random>

#include "common/dataset.h"
#include "common/idx.h"

namespace cellgan::test {

// Raw 0..255 pixels, as an IDX file would hold them.
inline IdxImages synthetic_idx_images(std::int64_t count, std::uint32_t seed, std::vector<std::uint8_t>& labels) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> noise(0, 60);
  std::uniform_int_distribution<int> jitter(-1, 1);
  IdxImages images;
  images.count = count;
  images.rows = 28;
  images.cols = 28;
  images.pixels.resize(static_cast<std::size_t>(count * 28 * 28));
  labels.resize(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    const int label = static_cast<int>(i % 10);
    labels[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(label);
    std::uint8_t* image = images.pixels.data() + i * 28 * 28;
    for (int p = 0; p < 28 * 28; ++p) image[p] = static_cast<std::uint8_t>(noise(rng));
    const int top = 4 + (label / 5) * 14 + jitter(rng);
    const int left = 1 + (label % 5) * 5 + jitter(rng);
    for (int r = top; r < top + 5; ++r) {
      for (int c = left; c < left + 5; ++c) {
        if (r >= 0 && r < 28 && c >= 0 && c < 28) image[r * 28 + c] = 255;
      }
    }
  }
  return images;
}

// The same images scaled to [-1, 1], as load_image_data returns them.
inline ImageData synthetic_images(std::int64_t count, std::uint32_t seed) {
  ImageData data;
  const IdxImages raw = synthetic_idx_images(count, seed, data.labels);
  data.count = count;
  data.pixels.reserve(raw.pixels.size());
  for (const auto v : raw.pixels) data.pixels.push_back(static_cast<float>(v) / 127.5f - 1.0f);
  return data;
}

}  // namespace cellgan::test
