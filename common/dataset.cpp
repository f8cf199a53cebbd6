// Image datasets read from IDX folders (see common/dataset.h): choosing the
// folder, finding the four files (plain or ".gz"), checking that images
// and labels agree, and scaling pixels to [-1, 1]. The toy mixtures live in
// common/toy_data.cpp.
//
// Thread-safety: free functions; results are independent values.
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

#include "common/dataset.h"
#include "common/error.h"
#include "common/idx.h"
#include "common/log.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;

const char* kind_name(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kMnist: return "mnist";
    case DatasetKind::kFashion: return "fashion";
    case DatasetKind::kIdx: return "idx";
    case DatasetKind::kRing: return "ring";
    case DatasetKind::kGrid: return "grid";
  }
  return "?";
}

// What to tell the user when files are missing.
std::string missing_hint(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kMnist: return " (run deploy/prepare-data.sh to create it)";
    case DatasetKind::kFashion: return " (expected the Fashion-MNIST IDX files there; set data.path to another folder)";
    default: return " (set data.path to the folder of IDX files)";
  }
}

// "<folder>/<name>" if it exists, else "<folder>/<name>.gz" if that exists.
std::string find_file(const std::string& folder, const std::string& name, DatasetKind kind) {
  const fs::path plain = fs::path(folder) / name;
  std::error_code ec;
  if (fs::is_regular_file(plain, ec)) return plain.string();
  const fs::path gz = fs::path(folder) / (name + ".gz");
  if (fs::is_regular_file(gz, ec)) return gz.string();
  throw InputError(plain.string() + "[.gz]: not found" + missing_hint(kind));
}

}  // namespace

std::string dataset_folder(const DataConfig& data) {
  if (!data.path.empty()) return data.path;
  switch (data.dataset) {
    case DatasetKind::kMnist: return "data/mnist";
    case DatasetKind::kFashion: return "/usr/share/datasets/fashion-mnist";
    case DatasetKind::kIdx: throw InputError("data.path: required when data.dataset is idx");
    case DatasetKind::kRing:
    case DatasetKind::kGrid: return data.path;  // unused: generated in code
  }
  return data.path;
}

namespace {

struct SplitFiles {
  std::string folder;
  std::string prefix;  // "train" or "t10k"
  std::string images;
  std::string labels;
};

SplitFiles split_files(const DataConfig& data, Split split) {
  if (is_toy(data.dataset)) {
    throw InputError(std::string("data.dataset: ") + kind_name(data.dataset) +
                     " is a toy mixture and has no image files");
  }
  const std::string folder = dataset_folder(data);
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    // A relative path is read from where the command runs: say where that is.
    const std::string from = fs::path(folder).is_relative()
                                 ? fmt::format(" (relative to the working directory {})", fs::current_path(ec).string())
                                 : "";
    throw InputError(folder + ": dataset folder not found" + from + missing_hint(data.dataset));
  }
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  return {folder, prefix, find_file(folder, prefix + "-images-idx3-ubyte", data.dataset),
          find_file(folder, prefix + "-labels-idx1-ubyte", data.dataset)};
}

void check_label_values(const std::vector<std::uint8_t>& labels, const std::string& labels_path) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] > 9) {
      throw InputError(labels_path + ": expected labels 0..9, found " + std::to_string(labels[i]) + " at index " +
                       std::to_string(i));
    }
  }
}

}  // namespace

std::vector<std::uint8_t> load_labels(const DataConfig& data, Split split) {
  const SplitFiles files = split_files(data, split);
  std::vector<std::uint8_t> labels = read_idx_labels(files.labels);
  check_label_values(labels, files.labels);
  if (split == Split::kTrain && data.train_limit > 0 && data.train_limit < static_cast<std::int64_t>(labels.size()))
    labels.resize(static_cast<std::size_t>(data.train_limit));
  return labels;
}

void check_image_files(const DataConfig& data) {
  if (is_toy(data.dataset)) return;
  split_files(data, Split::kTrain);
  split_files(data, Split::kTest);
}

ImageBytes load_image_bytes(const DataConfig& data, Split split) {
  const auto [folder, prefix, images_path, labels_path] = split_files(data, split);

  IdxImages images = read_idx_images(images_path);
  std::vector<std::uint8_t> labels = read_idx_labels(labels_path);
  if (images.count == 0) throw InputError(images_path + ": expected at least one image, found 0");
  if (static_cast<std::int64_t>(labels.size()) != images.count) {
    throw InputError(labels_path + ": expected " + std::to_string(images.count) + " labels to match " + images_path +
                     ", found " + std::to_string(labels.size()));
  }
  check_label_values(labels, labels_path);

  ImageBytes out;
  out.count = images.count;
  if (split == Split::kTrain && data.train_limit > 0 && data.train_limit < out.count) out.count = data.train_limit;
  out.rows = images.rows;
  out.cols = images.cols;
  out.pixels = std::move(images.pixels);
  out.pixels.resize(static_cast<std::size_t>(out.count * out.dim()));
  out.pixels.shrink_to_fit();
  labels.resize(static_cast<std::size_t>(out.count));
  out.labels = std::move(labels);
  log::info("loaded {} {} images of {}x{} from {}{}", out.count, prefix, out.rows, out.cols, folder,
            out.count < images.count ? " (limited by data.train_limit)" : "");
  return out;
}

ImageData load_image_data(const DataConfig& data, Split split) {
  ImageBytes bytes = load_image_bytes(data, split);
  ImageData out;
  out.count = bytes.count;
  out.rows = bytes.rows;
  out.cols = bytes.cols;
  out.pixels.resize(bytes.pixels.size());
  std::transform(bytes.pixels.begin(), bytes.pixels.end(), out.pixels.begin(), pixel_value);
  out.labels = std::move(bytes.labels);
  return out;
}

}  // namespace cellgan
