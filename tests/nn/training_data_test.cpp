// Tests of TrainingData (common/nn/training_data.h): image rows read from
// the byte store are bit-identical to load_image_data's floats, the byte
// store is what is kept, toy rows are the seeded mixture sample.
#include "common/nn/training_data.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/dataset.h"
#include "common/error.h"
#include "common/idx.h"
#include "common/rng.h"
#include "tests/nn/synthetic_images.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;

TEST(TrainingData, ImageRowsEqualTheScaledImagesBitForBit) {
  const fs::path folder =
      fs::path(CELLGAN_BINARY_DIR) / "test-tmp" / ("training-data-" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::vector<std::uint8_t> labels;
  IdxImages images = test::synthetic_idx_images(50, /*seed=*/4, labels);
  images.pixels[0] = 0;    // the ends of the byte range
  images.pixels[1] = 255;
  write_idx_images((folder / "train-images-idx3-ubyte").string(), images);
  write_idx_labels((folder / "train-labels-idx1-ubyte").string(), labels);

  Config config;
  config.data.dataset = DatasetKind::kIdx;
  config.data.path = folder.string();
  config.data.train_limit = 40;
  const TrainingData data(config);
  const ImageData reference = load_image_data(config.data, Split::kTrain);
  ASSERT_EQ(data.size(), 40);
  ASSERT_EQ(data.dim(), 784);
  ASSERT_EQ(reference.count, 40);

  const torch::Tensor index = torch::tensor({39, 0, 7, 7}, torch::kLong);
  const torch::Tensor rows = data.rows(index);
  ASSERT_EQ(rows.scalar_type(), torch::kFloat32);
  ASSERT_EQ(rows.sizes(), (std::vector<std::int64_t>{4, 784}));
  const float* got = rows.contiguous().data_ptr<float>();
  const std::vector<std::int64_t> picked = {39, 0, 7, 7};
  for (std::size_t r = 0; r < picked.size(); ++r) {
    EXPECT_EQ(std::memcmp(got + r * 784, reference.pixels.data() + picked[r] * 784, 784 * sizeof(float)), 0)
        << "row " << r;
  }
  EXPECT_EQ(rows[1][0].item<float>(), -1.0f);
  EXPECT_EQ(rows[1][1].item<float>(), 1.0f);
  fs::remove_all(folder);
}

TEST(TrainingData, ToyRowsAreTheSeededMixtureSample) {
  Config config;
  config.seed = 9;
  config.data.dataset = DatasetKind::kGrid;
  config.data.toy_samples = 300;
  const TrainingData data(config);
  ASSERT_EQ(data.size(), 300);
  ASSERT_EQ(data.dim(), 2);
  const std::vector<float> points =
      sample_toy(toy_mixture(DatasetKind::kGrid), 300, derive_seed(config.seed, Stream::kToyData, 0));
  const torch::Tensor rows = data.rows(torch::tensor({299, 3}, torch::kLong)).contiguous();
  EXPECT_EQ(rows[0][0].item<float>(), points[2 * 299]);
  EXPECT_EQ(rows[0][1].item<float>(), points[2 * 299 + 1]);
  EXPECT_EQ(rows[1][0].item<float>(), points[6]);
  EXPECT_EQ(rows[1][1].item<float>(), points[7]);
}

TEST(TrainingData, MissingImageFolderIsAnInputError) {
  Config config;
  config.data.dataset = DatasetKind::kIdx;
  config.data.path = "/nonexistent/cellgan-training-data";
  EXPECT_THROW(TrainingData{config}, InputError);
}

}  // namespace
}  // namespace cellgan

namespace cellgan {
namespace {

// layout per_class: a class's data is the rows of that label, in file order.
TEST(TrainingData, AClassHoldsTheRowsOfItsLabelOnly) {
  const fs::path folder = fs::path(CELLGAN_BINARY_DIR) / "test-tmp" / ("class-data-" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::vector<std::uint8_t> labels;
  const IdxImages images = test::synthetic_idx_images(60, /*seed=*/5, labels);  // labels i % 10
  write_idx_images((folder / "train-images-idx3-ubyte").string(), images);
  write_idx_labels((folder / "train-labels-idx1-ubyte").string(), labels);
  Config config;
  config.data.dataset = DatasetKind::kIdx;
  config.data.path = folder.string();
  const TrainingData all(config);
  for (const int label : {0, 3, 9}) {
    const TrainingData one(config, label);
    ASSERT_EQ(one.size(), 6) << "label " << label;
    const torch::Tensor expected = all.rows(torch::arange(label, 60, 10, torch::kLong));
    EXPECT_TRUE(torch::equal(one.rows(torch::arange(0, 6, torch::kLong)), expected)) << "label " << label;
  }
  config.data.train_limit = 25;  // labels 0..9, 0..9, 0..4
  EXPECT_EQ(TrainingData(config, 4).size(), 3);
  EXPECT_EQ(TrainingData(config, 5).size(), 2);
  EXPECT_THROW(TrainingData(config, 10), std::invalid_argument);
  fs::remove_all(folder);
}

}  // namespace
}  // namespace cellgan
