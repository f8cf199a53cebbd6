// PNG sample grids and scatter plots (libpng's simplified API, encoded in
// memory) and .npy float32 arrays; see common/image_files.h. Every file is
// written with write_file_atomic (common/atomic_file.cpp).
//
// Grid layout: like torchvision's make_grid, a 2-pixel border of value 0
// surrounds every tile (so also the outer edge); unused tiles of the last
// row stay 0. Pixel v in [-1, 1] maps to round((v + 1) * 127.5).
//
// Scatter layout: RGB, white background, each point a dark 3x3 dot, each
// mode a red cross drawn on top; x grows rightwards, y upwards.
//
// Thread-safety: free functions over independent files.
#include "common/image_files.h"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "common/error.h"
#include "common/label_font.h"
#include "common/path_checks.h"

namespace cellgan {
namespace {

// Encodes 8-bit pixels (gray or RGB) as PNG and writes the file atomically.
void write_png(const std::string& path, const std::vector<std::uint8_t>& pixels, std::int64_t width,
               std::int64_t height, bool rgb) {
  if (width < 1 || height < 1 || width > PNG_UINT_31_MAX || height > PNG_UINT_31_MAX) {
    throw std::invalid_argument(path + ": PNG size out of range");
  }
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = rgb ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  const auto stride = static_cast<png_int_32>(width * (rgb ? 3 : 1));
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), stride, nullptr)) {
    throw std::runtime_error(path + ": cannot encode PNG: " + image.message);
  }
  std::string bytes(size, '\0');
  if (!png_image_write_to_memory(&image, bytes.data(), &size, 0, pixels.data(), stride, nullptr)) {
    throw std::runtime_error(path + ": cannot encode PNG: " + image.message);
  }
  bytes.resize(size);
  write_file_atomic(path, bytes);
}

// `pixels` (width x height, `channels` bytes a pixel) with the labels'
// margins added: white, with the text in black.
std::vector<std::uint8_t> with_labels(const std::vector<std::uint8_t>& pixels, std::int64_t& width,
                                      std::int64_t& height, int channels, const ImageLabels& labels,
                                      std::int64_t tile_top, std::int64_t tile_pitch, std::int64_t tile_height) {
  constexpr int kScale = 2, kPad = 4;
  std::int64_t left = 0;
  for (const std::string& row : labels.rows) left = std::max(left, text_width(row, kScale) + 2 * kPad);
  const std::int64_t top = labels.title.empty() ? 0 : kGlyphHeight * kScale + 2 * kPad;
  const std::int64_t out_width = std::max(left + width, text_width(labels.title, kScale) + 2 * kPad);
  const std::int64_t out_height = top + height;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(out_width * out_height * channels), 255);
  for (std::int64_t r = 0; r < height; ++r)
    std::copy_n(pixels.data() + r * width * channels, width * channels,
                out.data() + ((top + r) * out_width + left) * channels);
  if (!labels.title.empty()) draw_text(out, out_width, channels, kPad, kPad, labels.title, kScale, 0);
  for (std::size_t i = 0; i < labels.rows.size(); ++i) {
    const std::int64_t y = top + tile_top + static_cast<std::int64_t>(i) * tile_pitch +
                           (tile_height - kGlyphHeight * kScale) / 2;
    draw_text(out, out_width, channels, kPad, y, labels.rows[i], kScale, 0);
  }
  width = out_width;
  height = out_height;
  return out;
}

std::uint8_t to_gray(float v) {
  if (!(v > -1.0f)) return 0;  // also NaN
  if (v >= 1.0f) return 255;
  return static_cast<std::uint8_t>(std::lround((static_cast<double>(v) + 1.0) * 127.5));
}

const std::string kNpyMagic = "\x93NUMPY";
const std::string kNpyDictHead = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
const std::string kNpyDictTail = "), }";

std::string npy_dict(std::int64_t rows, std::int64_t cols) {
  return kNpyDictHead + std::to_string(rows) + ", " + std::to_string(cols) + kNpyDictTail;
}

// Parses a non-negative decimal at `pos`, advancing it; false if none.
bool parse_count(const std::string& text, std::size_t& pos, std::int64_t& value) {
  const std::size_t start = pos;
  value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 15) {
    value = value * 10 + (text[pos] - '0');
    ++pos;
  }
  return pos > start && (pos >= text.size() || text[pos] < '0' || text[pos] > '9');
}

}  // namespace

std::int64_t square_grid_width(std::int64_t count) {
  std::int64_t k = 1;
  while (k * k < count) ++k;
  return k;
}

void write_image_grid_png(const std::string& path, const std::vector<float>& images, std::int64_t count,
                          std::int64_t rows, std::int64_t cols, std::int64_t per_row, const ImageLabels& labels) {
  constexpr std::int64_t kBorder = 2;
  if (count < 1 || rows < 1 || cols < 1 || per_row < 1) {
    throw std::invalid_argument(path + ": write_image_grid_png: count, rows, cols and per_row must be >= 1");
  }
  if (static_cast<std::int64_t>(images.size()) != count * rows * cols) {
    throw std::invalid_argument(path + ": write_image_grid_png: expected count * rows * cols values");
  }
  const std::int64_t grid_cols = std::min(per_row, count);
  const std::int64_t grid_rows = (count + grid_cols - 1) / grid_cols;
  std::int64_t width = grid_cols * (cols + kBorder) + kBorder;
  std::int64_t height = grid_rows * (rows + kBorder) + kBorder;
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(width * height), 0);
  for (std::int64_t k = 0; k < count; ++k) {
    const std::int64_t top = (k / grid_cols) * (rows + kBorder) + kBorder;
    const std::int64_t left = (k % grid_cols) * (cols + kBorder) + kBorder;
    const float* src = images.data() + k * rows * cols;
    for (std::int64_t r = 0; r < rows; ++r) {
      std::uint8_t* dst = pixels.data() + (top + r) * width + left;
      for (std::int64_t c = 0; c < cols; ++c) dst[c] = to_gray(src[r * cols + c]);
    }
  }
  if (static_cast<std::int64_t>(labels.rows.size()) > grid_rows)
    throw std::invalid_argument(path + ": write_image_grid_png: more row labels than rows of images");
  if (!labels.title.empty() || !labels.rows.empty())
    pixels = with_labels(pixels, width, height, 1, labels, kBorder, rows + kBorder, rows);
  write_png(path, pixels, width, height, false);
}

void write_scatter_png(const std::string& path, const std::vector<float>& points, const std::vector<float>& modes,
                       float extent, std::int64_t size, const ImageLabels& labels) {
  if (!(extent > 0.0f) || size < 1) {
    throw std::invalid_argument(path + ": write_scatter_png: extent must be > 0 and size >= 1");
  }
  if (points.size() % 2 != 0 || modes.size() % 2 != 0) {
    throw std::invalid_argument(path + ": write_scatter_png: points and modes must be (x, y) pairs");
  }
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(size * size * 3), 255);
  auto put = [&](std::int64_t row, std::int64_t col, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    if (row < 0 || row >= size || col < 0 || col >= size) return;
    std::uint8_t* p = rgb.data() + (row * size + col) * 3;
    p[0] = r;
    p[1] = g;
    p[2] = b;
  };
  // Pixel of a point; false when it lies outside the plotted square.
  auto locate = [&](float x, float y, std::int64_t& row, std::int64_t& col) {
    const double fx = (static_cast<double>(x) + extent) / (2.0 * extent) * static_cast<double>(size);
    const double fy = (extent - static_cast<double>(y)) / (2.0 * extent) * static_cast<double>(size);
    if (!(fx >= 0.0 && fx < static_cast<double>(size) && fy >= 0.0 && fy < static_cast<double>(size))) return false;
    col = static_cast<std::int64_t>(fx);
    row = static_cast<std::int64_t>(fy);
    return true;
  };
  std::int64_t row = 0;
  std::int64_t col = 0;
  for (std::size_t i = 0; i + 1 < points.size(); i += 2) {
    if (!locate(points[i], points[i + 1], row, col)) continue;
    for (std::int64_t dr = -1; dr <= 1; ++dr) {
      for (std::int64_t dc = -1; dc <= 1; ++dc) put(row + dr, col + dc, 30, 30, 30);
    }
  }
  // Crosses 2 pixels thick, large enough to show beside a cloud of dots.
  const std::int64_t arm = std::max<std::int64_t>(4, size / 40);
  for (std::size_t i = 0; i + 1 < modes.size(); i += 2) {
    if (!locate(modes[i], modes[i + 1], row, col)) continue;
    for (std::int64_t d = -arm; d <= arm; ++d) {
      for (std::int64_t t = 0; t <= 1; ++t) {
        put(row + d, col + d + t, 220, 0, 0);
        put(row + d, col - d + t, 220, 0, 0);
      }
    }
  }
  std::int64_t width = size, height = size;
  if (!labels.title.empty()) rgb = with_labels(rgb, width, height, 3, ImageLabels{labels.title, {}}, 0, 0, 0);
  write_png(path, rgb, width, height, true);
}

void write_npy(const std::string& path, const std::vector<float>& data, std::int64_t rows, std::int64_t cols) {
  if (rows < 0 || cols < 0 || static_cast<std::int64_t>(data.size()) != rows * cols) {
    throw std::invalid_argument(path + ": write_npy: expected rows * cols values");
  }
  // Magic, version 1.0, 2-byte header length, dict padded with spaces and
  // ended by '\n' so that the data starts at a multiple of 64 bytes.
  std::string header = npy_dict(rows, cols);
  const std::size_t unpadded = kNpyMagic.size() + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string bytes = kNpyMagic;
  bytes.push_back('\x01');
  bytes.push_back('\x00');
  bytes.push_back(static_cast<char>(header.size() & 0xFF));
  bytes.push_back(static_cast<char>((header.size() >> 8) & 0xFF));
  bytes += header;
  bytes.reserve(bytes.size() + data.size() * 4);
  for (const float v : data) {
    std::uint32_t u = 0;
    std::memcpy(&u, &v, 4);
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>((u >> (8 * b)) & 0xFF));
  }
  write_file_atomic(path, bytes);
}

NpyArray read_npy(const std::string& path) {
  const std::string why = why_no_input_file(path);
  if (!why.empty()) throw InputError(path + ": " + why + ": expected a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path + ": cannot read");
  if (bytes.size() < 10 || bytes.compare(0, kNpyMagic.size(), kNpyMagic) != 0) {
    throw InputError(path + ": not a .npy file: expected the magic \\x93NUMPY");
  }
  if (bytes[6] != '\x01' || bytes[7] != '\x00') {
    throw InputError(path + ": expected .npy version 1.0, found " + std::to_string(static_cast<unsigned char>(bytes[6])) +
                     "." + std::to_string(static_cast<unsigned char>(bytes[7])));
  }
  const std::size_t header_size =
      static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  if (bytes.size() < 10 + header_size) {
    throw InputError(path + ": truncated: expected a " + std::to_string(header_size) + "-byte .npy header, found " +
                     std::to_string(bytes.size() - 10) + " bytes");
  }
  const std::string header = bytes.substr(10, header_size);
  // Exactly "{'descr': '<f4', 'fortran_order': False, 'shape': (R, C), }",
  // then spaces, then '\n'.
  NpyArray array;
  std::size_t pos = kNpyDictHead.size();
  bool ok = header.compare(0, kNpyDictHead.size(), kNpyDictHead) == 0 && parse_count(header, pos, array.rows) &&
            header.compare(pos, 2, ", ") == 0;
  if (ok) {
    pos += 2;
    ok = parse_count(header, pos, array.cols) && header.compare(pos, kNpyDictTail.size(), kNpyDictTail) == 0;
  }
  if (ok) {
    pos += kNpyDictTail.size();
    const std::size_t end = header.find_first_not_of(' ', pos);
    ok = end == header.size() - 1 && header.back() == '\n';
  }
  if (!ok) {
    std::string shown = header.substr(0, std::min<std::size_t>(header.size(), 120));
    std::replace(shown.begin(), shown.end(), '\n', ' ');
    throw InputError(path + ": expected a .npy header " + kNpyDictHead + "R, C" + kNpyDictTail +
                     " (2-D little-endian float32, C order), found " + shown);
  }
  // Dimensions have at most 15 digits each, so 128 bits cannot overflow.
  const unsigned __int128 expected =
      static_cast<unsigned __int128>(array.rows) * static_cast<unsigned __int128>(array.cols) * 4;
  const std::size_t found = bytes.size() - 10 - header_size;
  if (found != expected) {
    throw InputError(path + ": " + (found < expected ? "truncated: " : "") + "expected 4 * " +
                     std::to_string(array.rows) + " * " + std::to_string(array.cols) +
                     " data bytes, found " + std::to_string(found));
  }
  array.data.resize(static_cast<std::size_t>(array.rows * array.cols));
  const auto* src = reinterpret_cast<const unsigned char*>(bytes.data()) + 10 + header_size;
  for (std::size_t i = 0; i < array.data.size(); ++i) {
    const std::uint32_t u = std::uint32_t{src[4 * i]} | (std::uint32_t{src[4 * i + 1]} << 8) |
                            (std::uint32_t{src[4 * i + 2]} << 16) | (std::uint32_t{src[4 * i + 3]} << 24);
    std::memcpy(&array.data[i], &u, 4);
  }
  return array;
}

}  // namespace cellgan
