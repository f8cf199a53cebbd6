// Tests of common/idx.h: round trips (plain and gzip) and the checks on
// truncated, foreign and inconsistent files.
#include "common/idx.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::read_bytes;
using test::TempDir;
using test::write_bytes;

IdxImages sample_images(std::int64_t count, std::int64_t rows, std::int64_t cols) {
  IdxImages images;
  images.count = count;
  images.rows = rows;
  images.cols = cols;
  for (std::int64_t i = 0; i < count * rows * cols; ++i) images.pixels.push_back(static_cast<std::uint8_t>(i * 37 + 11));
  return images;
}

void gzip_file(const std::string& from, const std::string& to) {
  const std::string bytes = read_bytes(from);
  gzFile out = gzopen(to.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
}

std::string big_endian(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

TEST(Idx, ImagesAndLabelsRoundTripPlain) {
  TempDir dir;
  const IdxImages images = sample_images(5, 4, 3);
  const std::vector<std::uint8_t> labels = {3, 1, 4, 1, 5};
  write_idx_images(dir.file("img"), images);
  write_idx_labels(dir.file("lab"), labels);

  const std::string raw = read_bytes(dir.file("img"));
  ASSERT_EQ(raw.size(), 16u + 60u);
  EXPECT_EQ(raw.substr(0, 16), big_endian(0x803) + big_endian(5) + big_endian(4) + big_endian(3));

  const IdxImages back = read_idx_images(dir.file("img"));
  EXPECT_EQ(back.count, 5);
  EXPECT_EQ(back.rows, 4);
  EXPECT_EQ(back.cols, 3);
  EXPECT_EQ(back.pixels, images.pixels);
  EXPECT_EQ(read_idx_labels(dir.file("lab")), labels);
  // Atomic writes leave no temporary files behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 2);
}

TEST(Idx, ReadsGzipCompressedFiles) {
  TempDir dir;
  const IdxImages images = sample_images(7, 28, 28);
  const std::vector<std::uint8_t> labels = {0, 1, 2, 3, 4, 5, 9};
  write_idx_images(dir.file("img"), images);
  write_idx_labels(dir.file("lab"), labels);
  gzip_file(dir.file("img"), dir.file("img.gz"));
  gzip_file(dir.file("lab"), dir.file("lab.gz"));
  const std::string gz = read_bytes(dir.file("img.gz"));
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);

  const IdxImages back = read_idx_images(dir.file("img.gz"));
  EXPECT_EQ(back.count, 7);
  EXPECT_EQ(back.rows, 28);
  EXPECT_EQ(back.cols, 28);
  EXPECT_EQ(back.pixels, images.pixels);
  EXPECT_EQ(read_idx_labels(dir.file("lab.gz")), labels);
}

TEST(Idx, TruncatedPayloadNamesFileAndSizes) {
  TempDir dir;
  write_idx_images(dir.file("img"), sample_images(3, 4, 4));
  const std::string raw = read_bytes(dir.file("img"));
  write_bytes(dir.file("short"), raw.substr(0, raw.size() - 10));
  const std::string message = input_error_of([&] { read_idx_images(dir.file("short")); });
  EXPECT_NE(message.find(dir.file("short")), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  EXPECT_NE(message.find("expected 48 pixel bytes, found 38"), std::string::npos) << message;
}

TEST(Idx, TruncatedHeaderAndTruncatedGzip) {
  TempDir dir;
  write_bytes(dir.file("tiny"), big_endian(0x803) + big_endian(2));
  std::string message = input_error_of([&] { read_idx_images(dir.file("tiny")); });
  EXPECT_NE(message.find(dir.file("tiny")), std::string::npos) << message;
  EXPECT_NE(message.find("header"), std::string::npos) << message;

  write_idx_images(dir.file("img"), sample_images(50, 28, 28));
  gzip_file(dir.file("img"), dir.file("img.gz"));
  const std::string gz = read_bytes(dir.file("img.gz"));
  write_bytes(dir.file("cut.gz"), gz.substr(0, gz.size() / 2));
  message = input_error_of([&] { read_idx_images(dir.file("cut.gz")); });
  EXPECT_NE(message.find(dir.file("cut.gz")), std::string::npos) << message;
}

TEST(Idx, BadMagicNamesFileAndExpectedMagic) {
  TempDir dir;
  write_idx_labels(dir.file("labels"), {1, 2, 3});
  std::string message = input_error_of([&] { read_idx_images(dir.file("labels")); });
  EXPECT_NE(message.find(dir.file("labels")), std::string::npos) << message;
  EXPECT_NE(message.find("0x00000803"), std::string::npos) << message;
  EXPECT_NE(message.find("0x00000801"), std::string::npos) << message;

  write_idx_images(dir.file("images"), sample_images(1, 2, 2));
  message = input_error_of([&] { read_idx_labels(dir.file("images")); });
  EXPECT_NE(message.find(dir.file("images")), std::string::npos) << message;

  write_bytes(dir.file("text.txt"), "hello, this is not an IDX file at all");
  message = input_error_of([&] { read_idx_images(dir.file("text.txt")); });
  EXPECT_NE(message.find(dir.file("text.txt")), std::string::npos) << message;
}

TEST(Idx, WrongDimensionsAreRejected) {
  TempDir dir;
  // Announces 2 images of 3x3 but holds 3 images' worth of bytes.
  write_bytes(dir.file("extra"),
              big_endian(0x803) + big_endian(2) + big_endian(3) + big_endian(3) + std::string(27, '\x07'));
  std::string message = input_error_of([&] { read_idx_images(dir.file("extra")); });
  EXPECT_NE(message.find(dir.file("extra")), std::string::npos) << message;
  EXPECT_NE(message.find("expected 18 pixel bytes"), std::string::npos) << message;

  // Zero rows.
  write_bytes(dir.file("flat"), big_endian(0x803) + big_endian(4) + big_endian(0) + big_endian(28));
  message = input_error_of([&] { read_idx_images(dir.file("flat")); });
  EXPECT_NE(message.find(dir.file("flat")), std::string::npos) << message;
  EXPECT_NE(message.find("dimensions"), std::string::npos) << message;

  // A header announcing an absurd size must fail cleanly, not allocate it.
  write_bytes(dir.file("huge"), big_endian(0x803) + big_endian(0xFFFFFFFF) + big_endian(0xFFFF) +
                                    big_endian(0xFFFF) + std::string(100, '\0'));
  message = input_error_of([&] { read_idx_images(dir.file("huge")); });
  EXPECT_NE(message.find(dir.file("huge")), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;

  // Labels announcing more than they hold.
  write_bytes(dir.file("labels"), big_endian(0x801) + big_endian(10) + std::string(9, '\x01'));
  message = input_error_of([&] { read_idx_labels(dir.file("labels")); });
  EXPECT_NE(message.find(dir.file("labels")), std::string::npos) << message;
  EXPECT_NE(message.find("expected 10 labels, found 9"), std::string::npos) << message;
}

TEST(Idx, MissingFileNamesIt) {
  TempDir dir;
  const std::string message = input_error_of([&] { read_idx_labels(dir.file("nowhere-idx1-ubyte")); });
  EXPECT_NE(message.find(dir.file("nowhere-idx1-ubyte")), std::string::npos) << message;
}

}  // namespace
}  // namespace cellgan
