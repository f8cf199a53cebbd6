// IDX files (the MNIST format): reading with full checks, and writing.
//
// A file may be plain or gzip-compressed (".gz"); reading detects the gzip
// magic itself. The reader checks the magic number (0x00000803 for images,
// 0x00000801 for labels), the dimensions, and that the payload has exactly
// the announced size. Any mismatch, a truncated file or a foreign file
// throws InputError naming the file and what was expected.
//
// Thread-safety: free functions over independent files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cellgan {

struct IdxImages {
  std::int64_t count = 0;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::uint8_t> pixels;  // count * rows * cols, row-major
};

IdxImages read_idx_images(const std::string& path);
std::vector<std::uint8_t> read_idx_labels(const std::string& path);

// Writes uncompressed IDX files, atomically (temporary file then rename).
void write_idx_images(const std::string& path, const IdxImages& images);
void write_idx_labels(const std::string& path, const std::vector<std::uint8_t>& labels);

}  // namespace cellgan
