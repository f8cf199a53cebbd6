// Manifests of complete checkpoints (see checkpoint_collector.h).
#include "master/checkpoint_collector.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"

namespace cellgan {

CheckpointCollector::CheckpointCollector(std::string output_dir, std::uint64_t seed, std::int64_t rows,
                                         std::int64_t cols, int cells, std::int64_t keep,
                                         std::function<void()> before_manifest)
    : output_dir_(std::move(output_dir)),
      seed_(seed),
      rows_(rows),
      cols_(cols),
      cells_(cells),
      before_manifest_(std::move(before_manifest)),
      keep_(keep) {}

std::optional<std::string> CheckpointCollector::take(const CheckpointMessage& message) {
  const std::int64_t g = message.generation;
  seconds_[g] = std::max(seconds_[g], message.seconds);
  auto& files = files_[g];
  for (const CheckpointFile& f : message.files) files[f.cell] = f;
  if (static_cast<int>(files.size()) < cells_) return std::nullopt;
  CheckpointManifest manifest{g, seed_, rows_, cols_, {}};
  std::uint64_t bytes = 0;
  for (const auto& [cell, f] : files) {
    manifest.cells.push_back(f);
    bytes += f.bytes;
  }
  const std::string folder = checkpoint_folder(output_dir_, g);
  if (before_manifest_) before_manifest_();
  write_manifest(folder, manifest);
  last_ = std::max(last_, g);
  const std::string line =
      fmt::format("checkpoint after generation {} complete: {} files, {:.1f} MB, written in {:.3f} s, {}", g,
                  manifest.cells.size(), static_cast<double>(bytes) / 1e6, seconds_[g], folder);
  files_.erase(g);
  seconds_.erase(g);
  for (const std::string& name : prune_checkpoints(output_dir_, keep_)) log::debug("deleted the older checkpoint {}", name);
  return line;
}

void CheckpointCollector::restart_from(std::int64_t generation) {
  last_ = generation;
  files_.erase(files_.upper_bound(generation), files_.end());
  seconds_.erase(seconds_.upper_bound(generation), seconds_.end());
}

}  // namespace cellgan
