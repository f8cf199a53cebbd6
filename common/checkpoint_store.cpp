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
constexpr int kRecordFormat = 1;

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

std::string record_name(int cell) { return fmt::format("cell-{:04d}.json", cell); }

// "cell-CCCC.json": a cell's record (temporary files and the rest are not).
bool is_record_name(const std::string& name) {
  return name.size() == 14 && name.rfind("cell-", 0) == 0 && name.compare(9, 5, ".json") == 0 &&
         std::all_of(name.begin() + 5, name.begin() + 9, [](char c) { return c >= '0' && c <= '9'; });
}

// One cell's record: its checkpoint and its file.
struct CellRecord {
  CheckpointId id;
  CheckpointFile file;
};

CellRecord read_record(const std::string& path) {
  const Bytes text = read_whole(path);
  try {
    const auto j = nlohmann::json::parse(text.begin(), text.end());
    if (j.at("format").get<int>() != kRecordFormat)
      throw InputError(fmt::format("{}: format {}: expected {}", path, j.at("format").dump(), kRecordFormat));
    CellRecord r;
    r.id = {j.at("generation").get<std::int64_t>(), j.at("seed").get<std::uint64_t>(),
            j.at("grid").at(0).get<std::int64_t>(), j.at("grid").at(1).get<std::int64_t>()};
    r.file = {j.at("cell").get<int>(), j.at("file").get<std::string>(), j.at("bytes").get<std::uint64_t>(),
              j.at("crc32").get<std::uint32_t>()};
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a checkpoint record: {}", path, e.what()));
  }
}

}  // namespace

std::string checkpoints_folder(const std::string& output_dir) { return (fs::path(output_dir) / run_files::kCheckpoints).string(); }

std::string checkpoint_folder(const std::string& output_dir, std::int64_t generation) {
  return (fs::path(checkpoints_folder(output_dir)) / fmt::format("gen-{:06d}", generation)).string();
}

CheckpointFile write_cell_checkpoint(const std::string& folder, const CheckpointId& id, int cell,
                                     const Bytes& bytes) {
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
  // Not fsynced: the file it describes is, so a record lost with a power cut
  // only leaves the checkpoint incomplete, and one that survives always
  // describes a file that did too.
  const nlohmann::json record = {{"format", kRecordFormat}, {"generation", id.generation}, {"seed", id.seed},
                                 {"grid", {id.rows, id.cols}}, {"cell", file.cell},       {"file", file.name},
                                 {"bytes", file.bytes},        {"crc32", file.crc32}};
  write_file_atomic((fs::path(folder) / record_name(cell)).string(), record.dump() + "\n", /*durable=*/false);
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
  throw InputError(fmt::format("{}/{}: no file for cell {}", folder, run_files::kManifest, cell));
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
  write_file_atomic((fs::path(folder) / run_files::kManifest).string(), j.dump(1) + "\n");
}

bool has_manifest(const std::string& folder) { return fs::exists(fs::path(folder) / run_files::kManifest); }

CheckpointManifest manifest_from_records(const std::string& folder) {
  std::vector<CellRecord> records;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (is_record_name(entry.path().filename().string())) records.push_back(read_record(entry.path().string()));
  if (records.empty())
    throw InputError(fmt::format("{}: incomplete: no {}, and no cell saved", folder, run_files::kManifest));
  const CheckpointId& id = records.front().id;
  std::map<int, CheckpointFile> cells;
  for (const CellRecord& r : records) {
    if (r.id.generation != id.generation || r.id.seed != id.seed || r.id.rows != id.rows || r.id.cols != id.cols)
      throw InputError(fmt::format("{}: {} and {} are records of different checkpoints", folder,
                                   record_name(records.front().file.cell), record_name(r.file.cell)));
    cells[r.file.cell] = r.file;
  }
  if (static_cast<std::int64_t>(cells.size()) != id.rows * id.cols)
    throw InputError(fmt::format("{}: incomplete: no {}, and {} of the {} cells saved", folder, run_files::kManifest,
                                 cells.size(), id.rows * id.cols));
  CheckpointManifest m{id.generation, id.seed, id.rows, id.cols, {}};
  for (const auto& [cell, file] : cells) m.cells.push_back(file);
  return m;
}

std::vector<std::string> complete_from_records(const std::string& output_dir, std::int64_t at_most) {
  std::vector<std::string> completed;
  for (std::int64_t g : folder_generations(output_dir)) {
    const std::string folder = checkpoint_folder(output_dir, g);
    if (g > at_most || has_manifest(folder)) continue;
    try {
      const CheckpointManifest m = manifest_from_records(folder);
      if (m.generation != g) continue;  // records copied from another folder: not this checkpoint's
      write_manifest(folder, m);
      completed.push_back(folder);
    } catch (const InputError&) {  // not every cell saved: incomplete, as it was
    }
  }
  return completed;
}

CheckpointManifest read_manifest(const std::string& folder) {
  const std::string path = (fs::path(folder) / run_files::kManifest).string();
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
    if (!has_manifest(folder)) {
      skipped.push_back(fmt::format("{}: incomplete (no {})", folder, run_files::kManifest));
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
    } else if (has_manifest(folder)) {
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
