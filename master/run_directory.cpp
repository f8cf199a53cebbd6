// The run directory (see run_directory.h).
#include "master/run_directory.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/image_files.h"

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

std::vector<std::int64_t> RunDirectory::add_records(std::int64_t generation, const std::string& json_lines,
                                                    std::map<int, std::vector<float>> previews) {
  // What the last call completed is dropped: the master reads it right away.
  written_lines_.clear();
  previews_.erase(previews_.begin(), previews_.upper_bound(written_));
  for (auto& [cell, samples] : previews) previews_[generation][cell] = std::move(samples);
  std::size_t start = 0;
  while (start < json_lines.size()) {
    std::size_t end = json_lines.find('\n', start);
    if (end == std::string::npos) end = json_lines.size();
    const std::string line = json_lines.substr(start, end - start);
    if (!line.empty()) {
      const int cell = nlohmann::json::parse(line).at("cell").get<int>();
      pending_[generation][cell] = line;
    }
    start = end + 1;
  }
  std::vector<std::int64_t> completed;
  for (;;) {
    auto it = pending_.find(written_ + 1);
    if (it == pending_.end() || static_cast<int>(it->second.size()) < cell_count_) break;
    for (const auto& [cell, line] : it->second) metrics_ << line << '\n';
    metrics_.flush();
    written_lines_[written_ + 1] = std::move(it->second);
    pending_.erase(it);
    completed.push_back(++written_);
  }
  return completed;
}

std::map<int, std::vector<float>> RunDirectory::take_previews(std::int64_t generation) {
  std::map<int, std::vector<float>> out;
  if (generation > written_) return out;  // not complete yet
  auto it = previews_.find(generation);
  if (it == previews_.end()) return out;
  out = std::move(it->second);
  previews_.erase(it);
  return out;
}

const std::map<int, std::string>& RunDirectory::generation_lines(std::int64_t generation) const {
  return written_lines_.at(generation);
}

void RunDirectory::event(const std::string& line) {
  const auto now = std::chrono::system_clock::now();
  events_ << fmt::format("{:%Y-%m-%dT%H:%M:%S} {}\n", fmt::localtime(std::chrono::system_clock::to_time_t(now)), line);
  events_.flush();
}

}  // namespace cellgan
