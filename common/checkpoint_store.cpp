// Checkpoints on disk (see checkpoint_store.h).
#include "common/checkpoint_store.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/image_files.h"
#include "common/run_files.h"

namespace cellgan {
namespace fs = std::filesystem;
namespace {

constexpr int kManifestFormat = 1;
constexpr const char* kManifestName = "manifest.json";

std::uint32_t crc_of(const Bytes& bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  std::size_t done = 0;
  while (done < bytes.size()) {  // zlib takes at most a uInt at a time
    const std::size_t n = std::min<std::size_t>(bytes.size() - done, 1u << 30);
    crc = crc32(crc, bytes.data() + done, static_cast<uInt>(n));
    done += n;
  }
  return static_cast<std::uint32_t>(crc);
}

Bytes read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: missing or unreadable", path));
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The generations of the checkpoint folders of a run, ascending.
std::vector<std::int64_t> folder_generations(const std::string& output_dir) {
  std::vector<std::int64_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoints_folder(output_dir), ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.size() != 10 || name.rfind("gen-", 0) != 0) continue;
    if (!std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    out.push_back(std::stoll(name.substr(4)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string checkpoints_folder(const std::string& output_dir) { return (fs::path(output_dir) / run_files::kCheckpoints).string(); }

std::string checkpoint_folder(const std::string& output_dir, std::int64_t generation) {
  return (fs::path(checkpoints_folder(output_dir)) / fmt::format("gen-{:06d}", generation)).string();
}

CheckpointFile write_cell_checkpoint(const std::string& folder, int cell, const Bytes& bytes) {
  // FOLDER is OUTPUT_DIR/checkpoints/gen-NNNNNN: the run folder itself is
  // never made here, so a run folder that disappeared is not re-created
  // half empty by a checkpoint.
  const fs::path run_dir = fs::path(folder).parent_path().parent_path();
  std::error_code ec;
  if (!run_dir.empty() && !fs::is_directory(run_dir, ec))
    throw std::runtime_error(fmt::format("{}: the run folder is gone: cannot write the checkpoint {}",
                                         run_dir.string(), folder));
  fs::create_directories(folder);
  CheckpointFile file{cell, fmt::format("cell-{:04d}.bin", cell), bytes.size(), crc_of(bytes)};
  write_file_atomic((fs::path(folder) / file.name).string(), std::string(bytes.begin(), bytes.end()));
  return file;
}

Bytes read_cell_checkpoint(const std::string& folder, const CheckpointFile& file) {
  const std::string path = (fs::path(folder) / file.name).string();
  Bytes bytes = read_whole(path);
  if (bytes.size() != file.bytes)
    throw InputError(fmt::format("{}: {} bytes, the manifest says {}: truncated or replaced", path, bytes.size(),
                                 file.bytes));
  if (crc_of(bytes) != file.crc32)
    throw InputError(fmt::format("{}: checksum mismatch (CRC-32 {:08x}, the manifest says {:08x}): corrupt", path,
                                 crc_of(bytes), file.crc32));
  return bytes;
}

const CheckpointFile& manifest_entry(const CheckpointManifest& manifest, int cell, const std::string& folder) {
  for (const auto& f : manifest.cells)
    if (f.cell == cell) return f;
  throw InputError(fmt::format("{}/{}: no file for cell {}", folder, kManifestName, cell));
}

void write_manifest(const std::string& folder, const CheckpointManifest& manifest) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& f : manifest.cells)
    cells.push_back({{"cell", f.cell}, {"file", f.name}, {"bytes", f.bytes}, {"crc32", f.crc32}});
  const nlohmann::json j = {{"format", kManifestFormat},
                            {"generation", manifest.generation},
                            {"seed", manifest.seed},
                            {"grid", {manifest.rows, manifest.cols}},
                            {"cells", cells}};
  fs::create_directories(folder);
  write_file_atomic((fs::path(folder) / kManifestName).string(), j.dump(1) + "\n");
}

CheckpointManifest read_manifest(const std::string& folder) {
  const std::string path = (fs::path(folder) / kManifestName).string();
  const Bytes text = read_whole(path);
  CheckpointManifest m;
  try {
    const auto j = nlohmann::json::parse(text.begin(), text.end());
    if (j.at("format").get<int>() != kManifestFormat)
      throw InputError(fmt::format("{}: format {}: expected {}", path, j.at("format").dump(), kManifestFormat));
    m.generation = j.at("generation").get<std::int64_t>();
    m.seed = j.at("seed").get<std::uint64_t>();
    m.rows = j.at("grid").at(0).get<std::int64_t>();
    m.cols = j.at("grid").at(1).get<std::int64_t>();
    for (const auto& c : j.at("cells"))
      m.cells.push_back({c.at("cell").get<int>(), c.at("file").get<std::string>(), c.at("bytes").get<std::uint64_t>(),
                         c.at("crc32").get<std::uint32_t>()});
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a checkpoint manifest: {}", path, e.what()));
  }
  if (static_cast<std::int64_t>(m.cells.size()) != m.rows * m.cols)
    throw InputError(fmt::format("{}: {} cell files for a {}x{} grid", path, m.cells.size(), m.rows, m.cols));
  for (const auto& f : m.cells)
    if (f.name.find('/') != std::string::npos || f.name.empty())
      throw InputError(fmt::format("{}: cell {}: bad file name '{}'", path, f.cell, f.name));
  return m;
}

CheckpointManifest read_complete_checkpoint(const std::string& folder) {
  CheckpointManifest m = read_manifest(folder);
  for (const auto& f : m.cells) read_cell_checkpoint(folder, f);
  return m;
}

std::optional<ResumePoint> newest_complete_checkpoint(const std::string& output_dir,
                                                      std::vector<std::string>& skipped, std::int64_t at_most) {
  auto generations = folder_generations(output_dir);
  for (auto it = generations.rbegin(); it != generations.rend(); ++it) {
    if (*it > at_most) continue;
    const std::string folder = checkpoint_folder(output_dir, *it);
    if (!fs::exists(fs::path(folder) / kManifestName)) {
      skipped.push_back(fmt::format("{}: incomplete (no {})", folder, kManifestName));
      continue;
    }
    try {
      CheckpointManifest m = read_complete_checkpoint(folder);
      if (m.generation != *it)
        throw InputError(fmt::format("{}: the manifest says generation {}", folder, m.generation));
      return ResumePoint{folder, std::move(m)};
    } catch (const InputError& e) {
      skipped.push_back(e.what());
    }
  }
  return std::nullopt;
}

std::vector<std::string> prune_checkpoints(const std::string& output_dir, std::int64_t keep) {
  const auto generations = folder_generations(output_dir);
  std::int64_t complete = 0;
  std::vector<std::string> removed;
  for (auto it = generations.rbegin(); it != generations.rend(); ++it) {
    const std::string folder = checkpoint_folder(output_dir, *it);
    if (complete >= keep) {
      std::error_code ec;
      fs::remove_all(folder, ec);
      removed.push_back(fs::path(folder).filename().string());
    } else if (fs::exists(fs::path(folder) / kManifestName)) {
      ++complete;
    }
  }
  return removed;
}

void remove_checkpoints_after(const std::string& output_dir, std::int64_t generation) {
  for (std::int64_t g : folder_generations(output_dir))
    if (g > generation) {
      std::error_code ec;
      fs::remove_all(checkpoint_folder(output_dir, g), ec);
    }
}

}  // namespace cellgan
