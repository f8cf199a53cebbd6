// The run directory (see run_directory.h).
#include "master/run_directory.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "common/error.h"
#include "common/image_files.h"
#include "master/metrics_line.h"

namespace cellgan {

namespace fs = std::filesystem;

void check_run_directory(const Config& config) {
  const fs::path dir(config.output_dir);
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(fmt::format("{}: output_dir: '{}' exists and is not a directory", config.source,
                                 config.output_dir));
  if (fs::exists(dir / "result.json", ec))
    throw InputError(fmt::format("{}: output_dir: '{}' already holds a finished run (result.json): expected a "
                                 "new or empty directory",
                                 config.source, config.output_dir));
}

RunDirectory::RunDirectory(const Config& config, int cell_count) : dir_(config.output_dir), cell_count_(cell_count) {
  fs::create_directories(dir_);
  write_file_atomic(path("config.yaml"), to_yaml(config));
  metrics_.open(path("metrics.jsonl"), std::ios::trunc);
  events_.open(path("events.log"), std::ios::trunc);
  if (!metrics_ || !events_) throw std::runtime_error(fmt::format("{}: cannot write the run directory", dir_));
}

std::string RunDirectory::path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

std::vector<std::int64_t> RunDirectory::add_records(std::int64_t generation, std::vector<GenerationRecord> records) {
  written_.clear();  // what the last call completed: the master has read it
  for (GenerationRecord& r : records) {
    const int cell = r.cell;
    pending_[generation][cell] = std::move(r);
  }
  std::vector<std::int64_t> completed;
  for (;;) {
    auto it = pending_.find(generations_written_ + 1);
    if (it == pending_.end() || static_cast<int>(it->second.size()) < cell_count_) break;
    for (const auto& [cell, record] : it->second) metrics_ << to_json_line(record);
    metrics_.flush();
    for (const auto& [cell, record] : it->second)
      for (const std::string& line : record.events) event(line);
    written_[generations_written_ + 1] = std::move(it->second);
    pending_.erase(it);
    completed.push_back(++generations_written_);
  }
  return completed;
}

std::map<int, std::vector<float>> RunDirectory::take_previews(std::int64_t generation) {
  std::map<int, std::vector<float>> out;
  const auto it = written_.find(generation);
  if (it == written_.end()) return out;
  for (auto& [cell, record] : it->second)
    if (!record.preview.empty()) out[cell] = std::move(record.preview);
  return out;
}

const std::map<int, GenerationRecord>& RunDirectory::generation_records(std::int64_t generation) const {
  return written_.at(generation);
}

void RunDirectory::event(const std::string& line) {
  const auto now = std::chrono::system_clock::now();
  events_ << fmt::format("{:%Y-%m-%dT%H:%M:%S} {}\n", fmt::localtime(std::chrono::system_clock::to_time_t(now)), line);
  events_.flush();
}

}  // namespace cellgan
