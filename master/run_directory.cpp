// The run directory (see run_directory.h).
#include "master/run_directory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <filesystem>

#include "common/checkpoint_store.h"
#include "common/error.h"
#include "common/image_files.h"
#include "common/path_checks.h"
#include "common/run_files.h"
#include "common/run_lock.h"
#include "common/run_records.h"

namespace cellgan {

namespace fs = std::filesystem;

namespace {

InputError in_use(const Config& config, const std::string& holder) {
  return InputError(fmt::format("{}: output_dir: '{}' is in use by a running job (pid {}, {}): expected a folder no "
                                "other job writes to",
                                config.source, config.output_dir, holder, run_files::kLock));
}

// The records of a run `dir` holds besides config.yaml: the checkpoints
// folder and the files a run writes (run.lock is none: a folder with only
// that holds nothing of a run).
std::vector<std::string> run_records_in(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  if (fs::is_directory(dir / run_files::kCheckpoints, ec)) found.push_back(run_files::kCheckpoints);
  for (const char* name : {run_files::kMetrics, run_files::kEvents, run_files::kRunState, run_files::kEnsemble,
                           run_files::kSummary, run_files::kSamples, run_files::kReport})
    if (fs::is_regular_file(dir / name, ec)) found.push_back(name);
  return found;
}

}  // namespace

void check_folder_free(const Config& config) {
  if (const auto holder = run_folder_holder(config.output_dir)) throw in_use(config, *holder);
}

std::unique_ptr<RunLock> lock_run_directory(const Config& config) {
  std::string holder;
  std::unique_ptr<RunLock> lock;
  try {
    lock = RunLock::take(config.output_dir, &holder);
  } catch (const std::exception& e) {
    if (exit_code_of(e) == kExitDiskFull) throw;
    throw InputError(fmt::format("{}: output_dir: '{}' cannot be created or written ({}): expected a folder that "
                                 "can be created or written",
                                 config.source, config.output_dir, e.what()));
  }
  if (!lock) throw in_use(config, holder);
  return lock;
}

void check_run_directory(const Config& config) {
  const fs::path dir(config.output_dir);
  std::error_code ec;
  const std::string why = why_no_directory(config.output_dir);
  if (!why.empty())
    throw InputError(fmt::format("{}: output_dir: '{}' {}: expected a folder that can be created or written",
                                 config.source, config.output_dir, why));
  if (fs::exists(dir / run_files::kResult, ec))
    throw InputError(fmt::format("{}: output_dir: '{}' already holds a finished run (result.json): expected a "
                                 "new or empty directory",
                                 config.source, config.output_dir));
  if (fs::exists(dir / run_files::kConfig, ec)) return;
  if (const auto records = run_records_in(dir); !records.empty())
    throw InputError(fmt::format("{}: output_dir: '{}' holds records of a run ({}) but not its {}: it is no new "
                                 "run, and cannot be resumed without it: put {} back, or choose another output_dir",
                                 config.source, config.output_dir, fmt::join(records, ", "), run_files::kConfig,
                                 run_files::kConfig));
}

namespace {

// The lines of metrics.jsonl for generations 1..last.
std::string metrics_up_to(const std::string& path, std::int64_t last) {
  std::ifstream in(path);
  std::string kept, line;
  while (std::getline(in, line)) {
    const auto record = parse_metrics_line(line);
    if (!record) continue;  // a line cut by the interruption
    if (record->generation <= last) kept += line + "\n";
  }
  return kept;
}

}  // namespace

RunDirectory::RunDirectory(const Config& config, int cell_count, std::int64_t resumed_after)
    : dir_(config.output_dir), cell_count_(cell_count) {
  fs::create_directories(dir_);
  write_file_atomic(path(run_files::kConfig), to_yaml(config));
  if (resumed_after >= 0) {
    write_file_atomic(path(run_files::kMetrics), metrics_up_to(path(run_files::kMetrics), resumed_after));
    remove_checkpoints_after(dir_, resumed_after);
    generations_written_ = resumed_after;
  }
  const auto mode = resumed_after >= 0 ? std::ios::app : std::ios::trunc;
  metrics_.open(path(run_files::kMetrics), mode);
  events_.open(path(run_files::kEvents), mode);
  if (!metrics_ || !events_) throw std::runtime_error(fmt::format("{}: cannot write the run directory", dir_));
  struct stat st {};
  if (::stat(dir_.c_str(), &st) == 0) {
    device_ = static_cast<std::uint64_t>(st.st_dev);
    inode_ = static_cast<std::uint64_t>(st.st_ino);
  }
}

std::string RunDirectory::path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

std::vector<std::int64_t> RunDirectory::add_records(std::int64_t generation, std::vector<GenerationRecord> records) {
  written_.clear();  // what the last call completed: the master has read it
  if (generation <= generations_written_) return {};  // again, after a rehoming: written already
  for (GenerationRecord& r : records) {
    const int cell = r.cell;
    pending_[generation][cell] = std::move(r);
  }
  std::vector<std::int64_t> completed;
  for (;;) {
    auto it = pending_.find(generations_written_ + 1);
    if (it == pending_.end() || static_cast<int>(it->second.size()) < cell_count_) break;
    for (const auto& [cell, record] : it->second) metrics_ << to_json_line(record);
    errno = 0;
    metrics_.flush();
    if (!metrics_) throw_write_failure(path(run_files::kMetrics), errno != 0 ? errno : EIO);
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

std::string RunDirectory::why_gone() const {
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) return "it is gone";
  if (static_cast<std::uint64_t>(st.st_dev) != device_ || static_cast<std::uint64_t>(st.st_ino) != inode_)
    return "it was moved or deleted, and another folder took its path";
  return "";
}

void RunDirectory::sync_metrics() {
  errno = 0;
  metrics_.flush();
  if (!metrics_) throw_write_failure(path(run_files::kMetrics), errno != 0 ? errno : EIO);
  const int fd = ::open(path(run_files::kMetrics).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_write_failure(path(run_files::kMetrics), errno);
  const int synced = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (synced != 0) throw_write_failure(path(run_files::kMetrics), error);
}

void RunDirectory::event(const std::string& line) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  localtime_r(&seconds, &local);
  events_ << fmt::format("{:%Y-%m-%dT%H:%M:%S} {}\n", local, line);
  events_.flush();
  if (listener_) listener_(line);
}

}  // namespace cellgan
