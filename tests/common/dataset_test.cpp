// Tests of the image-dataset half of common/dataset.h: folder defaults,
// loading IDX folders (plain and gzip), scaling, limits and the errors;
// and the real Fashion-MNIST folder when the machine has it.
#include "common/dataset.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "common/idx.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::read_bytes;
using test::TempDir;

// Writes a split of `count` 2x3 images whose pixels run through 0..255.
void write_split(const TempDir& dir, const std::string& prefix, std::int64_t count) {
  IdxImages images;
  images.count = count;
  images.rows = 2;
  images.cols = 3;
  std::vector<std::uint8_t> labels;
  for (std::int64_t i = 0; i < count; ++i) {
    for (int p = 0; p < 6; ++p) images.pixels.push_back(static_cast<std::uint8_t>((i * 6 + p) * 51 % 256));
    labels.push_back(static_cast<std::uint8_t>(i % 10));
  }
  write_idx_images(dir.file(prefix + "-images-idx3-ubyte"), images);
  write_idx_labels(dir.file(prefix + "-labels-idx1-ubyte"), labels);
}

void gzip_in_place(const std::string& path) {
  const std::string bytes = read_bytes(path);
  gzFile out = gzopen((path + ".gz").c_str(), "wb");
  ASSERT_NE(out, nullptr);
  gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
  std::filesystem::remove(path);
}

DataConfig idx_config(const TempDir& dir) {
  DataConfig data;
  data.dataset = DatasetKind::kIdx;
  data.path = dir.path().string();
  return data;
}

TEST(DatasetFolder, DefaultsAndExplicitPaths) {
  DataConfig data;
  data.dataset = DatasetKind::kMnist;
  EXPECT_EQ(dataset_folder(data), "data/mnist");
  data.dataset = DatasetKind::kFashion;
  EXPECT_EQ(dataset_folder(data), "/usr/share/datasets/fashion-mnist");
  data.path = "/somewhere/else";
  EXPECT_EQ(dataset_folder(data), "/somewhere/else");
  data.dataset = DatasetKind::kIdx;
  EXPECT_EQ(dataset_folder(data), "/somewhere/else");
  data.path.clear();
  EXPECT_EQ(input_error_of([&] { dataset_folder(data); }), "data.path: required when data.dataset is idx");
}

TEST(LoadImageData, ScalesPixelsAndKeepsLabels) {
  TempDir dir;
  write_split(dir, "train", 12);
  write_split(dir, "t10k", 4);
  const DataConfig data = idx_config(dir);
  const IdxImages raw = read_idx_images(dir.file("train-images-idx3-ubyte"));

  const ImageData train = load_image_data(data, Split::kTrain);
  EXPECT_EQ(train.count, 12);
  EXPECT_EQ(train.rows, 2);
  EXPECT_EQ(train.cols, 3);
  EXPECT_EQ(train.dim(), 6);
  ASSERT_EQ(train.pixels.size(), 72u);
  for (std::size_t i = 0; i < train.pixels.size(); ++i) {
    EXPECT_FLOAT_EQ(train.pixels[i], raw.pixels[i] / 127.5f - 1.0f) << i;
  }
  EXPECT_EQ(*std::min_element(train.pixels.begin(), train.pixels.end()), -1.0f);
  EXPECT_EQ(*std::max_element(train.pixels.begin(), train.pixels.end()), 1.0f);
  EXPECT_EQ(train.labels, read_idx_labels(dir.file("train-labels-idx1-ubyte")));

  const ImageData test = load_image_data(data, Split::kTest);
  EXPECT_EQ(test.count, 4);
  EXPECT_EQ(test.labels, read_idx_labels(dir.file("t10k-labels-idx1-ubyte")));
}

TEST(LoadImageData, TrainLimitAppliesToTrainingSplitOnly) {
  TempDir dir;
  write_split(dir, "train", 12);
  write_split(dir, "t10k", 11);
  DataConfig data = idx_config(dir);
  data.train_limit = 5;
  const ImageData full = load_image_data(idx_config(dir), Split::kTrain);
  const ImageData train = load_image_data(data, Split::kTrain);
  EXPECT_EQ(train.count, 5);
  EXPECT_EQ(train.pixels.size(), 30u);
  EXPECT_EQ(train.labels.size(), 5u);
  EXPECT_TRUE(std::equal(train.pixels.begin(), train.pixels.end(), full.pixels.begin()));
  EXPECT_EQ(load_image_data(data, Split::kTest).count, 11);
  data.train_limit = 100;  // larger than the data: everything
  EXPECT_EQ(load_image_data(data, Split::kTrain).count, 12);
}

TEST(LoadImageData, ReadsGzipFolders) {
  TempDir dir;
  write_split(dir, "t10k", 9);
  const ImageData plain = load_image_data(idx_config(dir), Split::kTest);
  gzip_in_place(dir.file("t10k-images-idx3-ubyte"));
  gzip_in_place(dir.file("t10k-labels-idx1-ubyte"));
  ASSERT_FALSE(std::filesystem::exists(dir.file("t10k-images-idx3-ubyte")));
  const ImageData gz = load_image_data(idx_config(dir), Split::kTest);
  EXPECT_EQ(gz.count, 9);
  EXPECT_EQ(gz.pixels, plain.pixels);
  EXPECT_EQ(gz.labels, plain.labels);
}

TEST(LoadImageData, MissingDataNamesItAndSuggestsPrepareScript) {
  TempDir dir;
  DataConfig data;
  data.dataset = DatasetKind::kMnist;
  data.path = dir.file("absent");
  std::string message = input_error_of([&] { load_image_data(data, Split::kTrain); });
  EXPECT_NE(message.find(dir.file("absent")), std::string::npos) << message;
  EXPECT_NE(message.find("deploy/prepare-data.sh"), std::string::npos) << message;

  data.path = dir.path().string();  // exists, but empty
  message = input_error_of([&] { load_image_data(data, Split::kTrain); });
  EXPECT_NE(message.find(dir.file("train-images-idx3-ubyte")), std::string::npos) << message;
  EXPECT_NE(message.find("deploy/prepare-data.sh"), std::string::npos) << message;

  write_split(dir, "train", 3);
  std::filesystem::remove(dir.file("train-labels-idx1-ubyte"));
  message = input_error_of([&] { load_image_data(data, Split::kTrain); });
  EXPECT_NE(message.find(dir.file("train-labels-idx1-ubyte")), std::string::npos) << message;
}

TEST(CheckImageFiles, NamesTheFirstMissingFileOfEitherSplit) {
  TempDir dir;
  write_split(dir, "train", 3);
  std::string message = input_error_of([&] { check_image_files(idx_config(dir)); });
  EXPECT_NE(message.find(dir.file("t10k-images-idx3-ubyte")), std::string::npos) << message;
  write_split(dir, "t10k", 2);
  EXPECT_NO_THROW(check_image_files(idx_config(dir)));
  std::filesystem::remove(dir.file("train-labels-idx1-ubyte"));
  message = input_error_of([&] { check_image_files(idx_config(dir)); });
  EXPECT_NE(message.find(dir.file("train-labels-idx1-ubyte")), std::string::npos) << message;
  DataConfig toy;
  toy.dataset = DatasetKind::kRing;
  EXPECT_NO_THROW(check_image_files(toy));
}

TEST(LoadImageData, MismatchedCountsAndBadLabelsAreRejected) {
  TempDir dir;
  write_split(dir, "train", 6);
  write_idx_labels(dir.file("train-labels-idx1-ubyte"), {1, 2, 3, 4, 5});
  std::string message = input_error_of([&] { load_image_data(idx_config(dir), Split::kTrain); });
  EXPECT_NE(message.find(dir.file("train-labels-idx1-ubyte")), std::string::npos) << message;
  EXPECT_NE(message.find("expected 6 labels"), std::string::npos) << message;

  write_idx_labels(dir.file("train-labels-idx1-ubyte"), {1, 2, 3, 4, 5, 10});
  message = input_error_of([&] { load_image_data(idx_config(dir), Split::kTrain); });
  EXPECT_NE(message.find(dir.file("train-labels-idx1-ubyte")), std::string::npos) << message;
  EXPECT_NE(message.find("0..9"), std::string::npos) << message;
}

TEST(LoadImageData, ToyDatasetsHaveNoImages) {
  DataConfig data;
  data.dataset = DatasetKind::kRing;
  EXPECT_NE(input_error_of([&] { load_image_data(data, Split::kTrain); }).find("data.dataset"), std::string::npos);
}

TEST(LoadImageData, FashionMnistWhenInstalled) {
  DataConfig data;
  data.dataset = DatasetKind::kFashion;
  if (!std::filesystem::is_directory(dataset_folder(data))) GTEST_SKIP() << "no " << dataset_folder(data);
  for (const Split split : {Split::kTrain, Split::kTest}) {
    const ImageData images = load_image_data(data, split);
    EXPECT_EQ(images.count, split == Split::kTrain ? 60000 : 10000);
    EXPECT_EQ(images.rows, 28);
    EXPECT_EQ(images.cols, 28);
    ASSERT_EQ(images.pixels.size(), static_cast<std::size_t>(images.count * 784));
    ASSERT_EQ(images.labels.size(), static_cast<std::size_t>(images.count));
    const auto [lo, hi] = std::minmax_element(images.pixels.begin(), images.pixels.end());
    EXPECT_EQ(*lo, -1.0f);
    EXPECT_EQ(*hi, 1.0f);
    const std::set<int> labels(images.labels.begin(), images.labels.end());
    EXPECT_EQ(labels, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  }
}

}  // namespace
}  // namespace cellgan
