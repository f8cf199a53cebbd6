// Writing what a run produces for people and tools: PNG sample grids
// (libpng), scatter plots of 2-D samples as PNG, and .npy float32 arrays.
//
// All writers are atomic: they write a temporary file beside the target,
// fsync it and rename it, so no partial file is ever left.
//
// Thread-safety: free functions over independent files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cellgan {

// Text around a picture (common/label_font.h, 2 pixels a font pixel, dark
// on white): a title strip above it, widened to fit the title, and for a
// grid one label per row of tiles to its left. Empty: none; the image is
// then as without labels, to the byte.
struct ImageLabels {
  std::string title;
  std::vector<std::string> rows;
};

// Tiles `count` grayscale images (rows x cols each, values in [-1, 1],
// clamped) into a grid `per_row` images wide, with a 2-pixel border.
void write_image_grid_png(const std::string& path, const std::vector<float>& images, std::int64_t count,
                          std::int64_t rows, std::int64_t cols, std::int64_t per_row, const ImageLabels& labels = {});

// The width of the squarest grid that holds `count` images: the smallest k
// with k * k >= count (1 for count <= 1). Pass it as per_row above.
std::int64_t square_grid_width(std::int64_t count);

// Draws 2-D points (n * 2 floats) as dots on a `size` x `size` image
// covering [-extent, extent]^2, with the `modes` (m * 2) marked.
// `labels.rows` is not used.
void write_scatter_png(const std::string& path, const std::vector<float>& points, const std::vector<float>& modes,
                       float extent, std::int64_t size, const ImageLabels& labels = {});

// .npy version 1.0, little-endian float32, C order, shape (rows, cols).
void write_npy(const std::string& path, const std::vector<float>& data, std::int64_t rows, std::int64_t cols);
struct NpyArray {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<float> data;
};
// Reads a 2-D float32 .npy; throws InputError naming the file otherwise.
NpyArray read_npy(const std::string& path);

// Atomic write of raw bytes (temp file, fsync, rename). Returns normally or
// throws std::runtime_error naming the path: DiskFull (error.h) when there
// is no space left for it. With `durable` false the
// fsyncs are left out: readers still see the old file or the whole new
// one, but a power cut may lose it; for a status record written often
// (run.json), where an fsync on a loaded disk would stall the caller.
void write_file_atomic(const std::string& path, const std::string& bytes, bool durable = true);

// Throws the error of a write to `path` that failed with errno `err`:
// DiskFull when is_disk_full(err), else std::runtime_error.
[[noreturn]] void throw_write_failure(const std::string& path, int err);

// The whole of a file's bytes; std::nullopt when it cannot be opened
// (missing, unreadable, a folder).
std::optional<std::string> read_file(const std::string& path);

}  // namespace cellgan
