// Tests of common/image_files.h: PNG grids and scatter plots read back with
// libpng, .npy round trips and rejections, and the atomic writer.
#include "common/image_files.h"
#include "common/label_font.h"

#include <gtest/gtest.h>
#include <png.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::read_bytes;
using test::TempDir;
using test::write_bytes;

struct Png {
  std::int64_t width = 0;
  std::int64_t height = 0;
  png_uint_32 format = 0;
  std::vector<std::uint8_t> pixels;  // in the file's own format
};

Png read_png(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  Png png;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << path << ": " << image.message;
    return png;
  }
  png.width = image.width;
  png.height = image.height;
  png.format = image.format;
  png.pixels.resize(PNG_IMAGE_SIZE(image));
  EXPECT_TRUE(png_image_finish_read(&image, nullptr, png.pixels.data(), 0, nullptr)) << image.message;
  return png;
}

std::size_t files_in(const TempDir& dir) {
  return static_cast<std::size_t>(
      std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()));
}

// Dark pixels (< 128) in rows [y0, y1) and columns [x0, x1).
int dark_in(const Png& png, std::int64_t y0, std::int64_t y1, std::int64_t x0, std::int64_t x1) {
  int n = 0;
  for (std::int64_t y = y0; y < y1; ++y)
    for (std::int64_t x = x0; x < x1; ++x) n += png.pixels[static_cast<std::size_t>(y * png.width + x)] < 128;
  return n;
}

TEST(ImageGrid, LabelsATitleAboveAndEachRowOfTilesToItsLeft) {
  TempDir dir;
  const std::vector<float> images(4 * 28 * 28, 1.0f);  // white tiles, 2 per row: 2 rows
  write_image_grid_png(dir.file("plain.png"), images, 4, 28, 28, 2);
  write_image_grid_png(dir.file("labelled.png"), images, 4, 28, 28, 2, ImageLabels{"generation 12, cell 3", {"class 0", "class 1"}});
  const Png plain = read_png(dir.file("plain.png")), labelled = read_png(dir.file("labelled.png"));
  const std::int64_t title = kGlyphHeight * 2 + 8, left = text_width("class 0", 2) + 8;
  EXPECT_EQ(labelled.height, plain.height + title);
  EXPECT_EQ(labelled.width, std::max(plain.width + left, text_width("generation 12, cell 3", 2) + 8))
      << "widened to hold the title";
  EXPECT_GT(dark_in(labelled, 0, title, 0, labelled.width), 100) << "the title's text";
  const std::int64_t row0 = title + 2, row1 = title + 2 + 30;
  EXPECT_GT(dark_in(labelled, row0, row0 + 28, 0, left), 50) << "row 0's label";
  EXPECT_GT(dark_in(labelled, row1, row1 + 28, 0, left), 50) << "row 1's label";
  EXPECT_EQ(dark_in(labelled, row0 + 2, row0 + 26, left + 2, left + 30), 0) << "the white tile is left as it was";
  EXPECT_THROW(write_image_grid_png(dir.file("bad.png"), images, 4, 28, 28, 2, ImageLabels{"", {"a", "b", "c"}}),
               std::invalid_argument)
      << "more labels than rows";
  EXPECT_THROW(write_image_grid_png(dir.file("bad.png"), images, 4, 28, 28, 2, ImageLabels{"GEN", {}}),
               std::invalid_argument)
      << "a character the font lacks";
}

TEST(LabelFont, DrawsTheGlyphsPixelsAtTheirPlaceAndScale) {
  EXPECT_EQ(text_width("", 2), 0);
  EXPECT_EQ(text_width("ab", 1), 11);
  std::vector<std::uint8_t> pixels(20 * 10, 255);
  draw_text(pixels, 20, 1, 1, 1, "-", 1, 0);  // '-' is row 3, all 5 columns
  for (int x = 0; x < 20; ++x)
    for (int y = 0; y < 10; ++y)
      EXPECT_EQ(pixels[static_cast<std::size_t>(y * 20 + x)], (y == 4 && x >= 1 && x <= 5) ? 0 : 255) << x << "," << y;
  std::vector<std::uint8_t> rgb(8 * 8 * 3, 255);
  draw_text(rgb, 8, 3, -2, 0, "1", 2, 7);  // clipped at the left edge, every channel set
  EXPECT_EQ(rgb[(0 * 8 + 2) * 3 + 0], 7);
  EXPECT_EQ(rgb[(0 * 8 + 2) * 3 + 2], 7);
}

TEST(ImageGrid, TilesImagesWithTwoPixelBorder) {
  TempDir dir;
  const std::int64_t count = 5, rows = 4, cols = 3, per_row = 3;
  std::vector<float> images;
  for (std::int64_t i = 0; i < count * rows * cols; ++i) images.push_back(std::sin(0.37f * i));
  images[0] = -1.0f;
  images[1] = 1.0f;
  images[2] = 0.0f;
  images[3] = 7.0f;   // clamped to 1
  images[4] = -3.0f;  // clamped to -1
  write_image_grid_png(dir.file("grid.png"), images, count, rows, cols, per_row);
  EXPECT_EQ(files_in(dir), 1u);

  const Png png = read_png(dir.file("grid.png"));
  EXPECT_EQ(png.format, static_cast<png_uint_32>(PNG_FORMAT_GRAY));
  EXPECT_EQ(png.width, per_row * (cols + 2) + 2);
  EXPECT_EQ(png.height, 2 * (rows + 2) + 2);
  ASSERT_EQ(png.pixels.size(), static_cast<std::size_t>(png.width * png.height));
  auto at = [&](std::int64_t y, std::int64_t x) { return png.pixels[y * png.width + x]; };
  EXPECT_EQ(at(2, 2), 0);
  EXPECT_EQ(at(2, 3), 255);
  EXPECT_EQ(at(2, 4), 128);  // 127.5 rounds up
  EXPECT_EQ(at(3, 2), 255);
  EXPECT_EQ(at(3, 3), 0);
  for (std::int64_t k = 0; k < count; ++k) {
    const std::int64_t top = (k / per_row) * (rows + 2) + 2;
    const std::int64_t left = (k % per_row) * (cols + 2) + 2;
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const float v = std::fmax(-1.0f, std::fmin(1.0f, images[(k * rows + r) * cols + c]));
        EXPECT_NEAR(at(top + r, left + c), (v + 1.0f) * 127.5f, 0.5f) << k << " " << r << " " << c;
      }
    }
    // The border column left of every tile and the row above it are black.
    for (std::int64_t r = -2; r < rows; ++r) EXPECT_EQ(at(top + r, left - 1), 0);
    for (std::int64_t c = -2; c < cols; ++c) EXPECT_EQ(at(top - 1, left + c), 0);
  }
  // The unused sixth tile stays black.
  EXPECT_EQ(at(rows + 2 + 2, 2 * (cols + 2) + 2), 0);
}

TEST(ImageGrid, BadArgumentsThrow) {
  TempDir dir;
  EXPECT_THROW(write_image_grid_png(dir.file("g.png"), std::vector<float>(10), 2, 2, 2, 1), std::invalid_argument);
  EXPECT_THROW(write_image_grid_png(dir.file("g.png"), std::vector<float>(8), 2, 2, 2, 0), std::invalid_argument);
  EXPECT_EQ(files_in(dir), 0u);
}

TEST(ImageGrid, SquareGridWidthIsTheSmallestSquareThatHolds) {
  // count -> k with (k-1)^2 < count <= k^2; exact at perfect squares.
  const std::vector<std::pair<std::int64_t, std::int64_t>> cases = {
      {0, 1}, {1, 1}, {2, 2}, {4, 2}, {5, 3}, {9, 3}, {10, 4}, {64, 8}, {65, 9}, {100, 10}, {101, 11}, {10000, 100}};
  for (const auto& [count, width] : cases) EXPECT_EQ(square_grid_width(count), width) << "count " << count;
}

TEST(ScatterPng, DrawsDarkDotsAndRedModesOnWhite) {
  TempDir dir;
  const std::vector<float> points = {0.0f, 0.0f, -1.0f, 0.5f, 9.0f, 9.0f};  // the last is off the plot
  const std::vector<float> modes = {1.0f, 1.0f};
  write_scatter_png(dir.file("s.png"), points, modes, 2.0f, 100);
  const Png png = read_png(dir.file("s.png"));
  EXPECT_EQ(png.format, static_cast<png_uint_32>(PNG_FORMAT_RGB));
  ASSERT_EQ(png.width, 100);
  ASSERT_EQ(png.height, 100);
  auto rgb = [&](std::int64_t y, std::int64_t x) {
    const std::uint8_t* p = &png.pixels[(y * 100 + x) * 3];
    return std::vector<int>{p[0], p[1], p[2]};
  };
  auto dark = [](const std::vector<int>& c) { return c[0] < 100 && c[1] < 100 && c[2] < 100; };
  auto red = [](const std::vector<int>& c) { return c[0] > 150 && c[1] < 80 && c[2] < 80; };
  EXPECT_TRUE(dark(rgb(50, 50))) << "origin is the centre";
  EXPECT_TRUE(dark(rgb(37, 25))) << "(-1, 0.5): y grows upwards";
  EXPECT_TRUE(red(rgb(25, 75))) << "mode (1, 1)";
  EXPECT_TRUE(red(rgb(27, 77))) << "the cross's arm";
  EXPECT_EQ(rgb(5, 5), (std::vector<int>{255, 255, 255}));
  EXPECT_EQ(rgb(90, 60), (std::vector<int>{255, 255, 255}));
  int dark_pixels = 0;
  for (std::int64_t y = 0; y < 100; ++y) {
    for (std::int64_t x = 0; x < 100; ++x) dark_pixels += dark(rgb(y, x));
  }
  EXPECT_EQ(dark_pixels, 2 * 9) << "two 3x3 dots";
}

TEST(Npy, RoundTripAndHeaderLayout) {
  TempDir dir;
  std::vector<float> data;
  for (int i = 0; i < 15; ++i) data.push_back(i * -1.25f + 0.1f);
  data[3] = std::numeric_limits<float>::infinity();
  write_npy(dir.file("a.npy"), data, 3, 5);
  const std::string bytes = read_bytes(dir.file("a.npy"));
  ASSERT_GT(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_size = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_size) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + header_size + 15 * 4);
  const std::string header = bytes.substr(10, header_size);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');

  const NpyArray back = read_npy(dir.file("a.npy"));
  EXPECT_EQ(back.rows, 3);
  EXPECT_EQ(back.cols, 5);
  EXPECT_EQ(back.data, data);

  write_npy(dir.file("empty.npy"), {}, 0, 4);
  const NpyArray empty = read_npy(dir.file("empty.npy"));
  EXPECT_EQ(empty.rows, 0);
  EXPECT_EQ(empty.cols, 4);
  EXPECT_TRUE(empty.data.empty());
}

TEST(Npy, ForeignOrDamagedFilesNameTheFile) {
  TempDir dir;
  write_npy(dir.file("good.npy"), std::vector<float>(6, 1.0f), 2, 3);
  const std::string good = read_bytes(dir.file("good.npy"));
  auto expect_rejected = [&](const std::string& name, const std::string& bytes, const std::string& hint) {
    write_bytes(dir.file(name), bytes);
    const std::string message = input_error_of([&] { read_npy(dir.file(name)); });
    EXPECT_NE(message.find(dir.file(name)), std::string::npos) << message;
    EXPECT_NE(message.find(hint), std::string::npos) << message;
  };
  expect_rejected("magic.npy", "PK\x03\x04" + good.substr(4), "magic");
  expect_rejected("truncated.npy", good.substr(0, good.size() - 1), "truncated");
  expect_rejected("longer.npy", good + "xxxx", "expected 4 * 2 * 3 data bytes");
  std::string f8 = good;
  f8.replace(f8.find("<f4"), 3, "<f8");
  expect_rejected("f8.npy", f8, "expected a .npy header");
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  expect_rejected("fortran.npy", fortran, "expected a .npy header");
  std::string three_d = good;
  three_d.replace(three_d.find("(2, 3)"), 6, "(2,3,1)");
  three_d.erase(three_d.find("} ") + 1, 1);  // keep the header length
  expect_rejected("three_d.npy", three_d, "expected a .npy header");
  std::string version = good;
  version[6] = '\x02';
  expect_rejected("version.npy", version, "version 1.0");
  EXPECT_NE(input_error_of([&] { read_npy(dir.file("missing.npy")); }).find(dir.file("missing.npy")),
            std::string::npos);
  // A folder used to end with exit 1 ("basic_filebuf::underflow").
  EXPECT_EQ(input_error_of([&] { read_npy(dir.path().string()); }),
            dir.path().string() + ": is a folder: expected a .npy file");
}

TEST(WriteFileAtomic, ReplacesWholeFilesAndReportsFailures) {
  TempDir dir;
  write_file_atomic(dir.file("f"), "first version, rather long");
  write_file_atomic(dir.file("f"), "second");
  EXPECT_EQ(read_bytes(dir.file("f")), "second");
  EXPECT_EQ(files_in(dir), 1u);
  try {
    write_file_atomic(dir.file("no/such/folder/f"), "x");
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("no/such/folder/f")), std::string::npos) << e.what();
  }
  EXPECT_EQ(files_in(dir), 1u);
}

}  // namespace
}  // namespace cellgan
