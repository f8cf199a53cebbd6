// The run directory (docs/operations.md, "The run folder"): the resolved configuration, metrics.jsonl,
// events.log, and at the end the ensemble, sample grid, result and
// summary. Created only after every input check has passed.
//
// metrics.jsonl gets one line per cell per generation, written in
// (generation, cell) order once a generation is complete, so the file's
// order does not depend on message timing.
//
// Thread-safety: one thread (the master's control loop).
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/generation_record.h"
#include "common/run_lock.h"

namespace cellgan {

// Throws InputError if `config.output_dir` already holds a finished run
// (a result.json), holds records of a run (checkpoints/, metrics.jsonl,
// events.log, run.json, results) without its config.yaml (neither a new
// run nor one that can be resumed), or cannot be created or written (a
// file in its way, a folder this process may not write into). Writes
// nothing.
void check_run_directory(const Config& config);

// Throws InputError when another job holds `config.output_dir`
// (common/run_lock.h). Creates nothing.
void check_folder_free(const Config& config);
// Creates `config.output_dir` if needed and takes its lock for the job;
// InputError when another job holds it or the folder cannot be created.
std::unique_ptr<RunLock> lock_run_directory(const Config& config);

class RunDirectory {
 public:
  // A new run: creates the directory and empties metrics.jsonl and
  // events.log. `resumed_after` >= 0 goes on with the interrupted run in it
  // instead: metrics.jsonl keeps its lines of generations 1..resumed_after
  // (rewritten atomically), events.log is appended to, and the checkpoints
  // taken after that generation are deleted, since the run writes them
  // again.
  RunDirectory(const Config& config, int cell_count, std::int64_t resumed_after = -1);

  std::string path(const std::string& name) const;
  // "" while the folder the run was started in is still at its path, else
  // why not (deleted, or moved and another made in its place).
  std::string why_gone() const;

  // `cell_count` records make a complete generation.
  // Adds a worker's records of one generation (their previews included);
  // returns the generations that became complete and were written to
  // metrics.jsonl (common/run_records.h), in order. The records' events lines go
  // to events.log then, in cell order. Throws when metrics.jsonl cannot be
  // written (DiskFull when there is no space left: error.h).
  std::vector<std::int64_t> add_records(std::int64_t generation, std::vector<GenerationRecord> records);
  // The preview samples of a complete generation, by cell (cells without
  // one are left out); handed over once. Like generation_records(), only
  // for the generations the last add_records() completed: older ones are
  // dropped, so memory stays flat however long the run.
  std::map<int, std::vector<float>> take_previews(std::int64_t generation);
  // The complete records, by cell, of a generation the last add_records()
  // completed (std::out_of_range for any other).
  const std::map<int, GenerationRecord>& generation_records(std::int64_t generation) const;
  std::int64_t generations_written() const { return generations_written_; }
  // Makes what metrics.jsonl holds durable (fsync): called before a
  // checkpoint's manifest is written. Throws DiskFull or std::runtime_error
  // when it cannot.
  void sync_metrics();

  // A timestamped line in events.log.
  void event(const std::string& line);
  // `listener` is also given every line event() writes, on event()'s thread
  // (the live status board's list of events).
  void on_event(std::function<void(const std::string&)> listener) { listener_ = std::move(listener); }

 private:
  std::string dir_;
  std::uint64_t device_ = 0, inode_ = 0;  // the folder's identity at the start
  int cell_count_;
  std::ofstream metrics_;
  std::ofstream events_;
  std::function<void(const std::string&)> listener_;
  std::map<std::int64_t, std::map<int, GenerationRecord>> pending_;  // generation -> cell -> record
  std::map<std::int64_t, std::map<int, GenerationRecord>> written_;   // the last call's, for progress lines
  std::int64_t generations_written_ = 0;
};

}  // namespace cellgan
