// What the master writes about a run as it goes (see progress_writer.h).
#include "master/progress_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "common/error.h"
#include "common/log.h"
#include "common/nn/scores.h"
#include "common/run_files.h"
#include "master/progress_line.h"
#include "master/run_directory.h"
#include "master/run_report.h"
#include "master/sample_png.h"
#include "master/status_board.h"

namespace cellgan {
namespace {

struct BestCell {
  int cell = -1;
  double score = INFINITY;
};

// The cell whose mixture scored lowest under `objective` in a generation.
BestCell best_cell(const std::map<int, GenerationRecord>& records, const std::string& objective) {
  BestCell best;
  for (const auto& [cell, record] : records) {
    const auto it = record.scores.find(objective);
    if (it != record.scores.end() && it->second < best.score) best = {cell, it->second};
  }
  return best;
}

// How the run's previous start ended, as its run.json says, and that SLURM
// requeued the job when it did (SLURM_RESTART_COUNT), for events.log.
std::string previous_ending(const RunState& before) {
  std::string line =
      before.status == "running"
          ? std::string("the previous start ended without its master recording why (the master was killed, or "
                        "SLURM requeued or preempted the job, or a node failed)")
          : fmt::format("the previous start ended {}{}", before.status, before.message.empty() ? "" : ": " + before.message);
  const char* restarts = std::getenv("SLURM_RESTART_COUNT");
  const char* job = std::getenv("SLURM_JOB_ID");
  if (restarts && job && std::atoi(restarts) > 0)
    line += fmt::format("; SLURM requeued job {} (restart {}): resuming", job, restarts);
  return line;
}

}  // namespace

ProgressWriter::ProgressWriter(const Config& config, RunDirectory& run, StatusBoard& board, LayoutDescription layout,
                               Clock::time_point started, std::int64_t resumed_after, bool progress_bar)
    : config_(config),
      run_(run),
      board_(board),
      layout_(layout),
      started_(started),
      resumed_after_(resumed_after),
      progress_bar_(progress_bar) {}

void ProgressWriter::start(int workers, const std::string& device, bool resuming) {
  state_ = RunState{};
  state_.layout = to_string(config_.layout);
  state_.exchange = config_.grid.exchange == ExchangeMode::kAsync ? "async" : "sync";
  state_.rows = static_cast<int>(config_.grid.rows);
  state_.cols = static_cast<int>(config_.grid.cols);
  state_.workers = workers;
  state_.device = device;
  state_.seed = config_.seed;
  state_.generations = config_.training.generations;
  state_.objective = objective_name(config_);
  if (resuming) {
    try {
      if (const auto before = read_run_state(config_.output_dir)) {
        const std::string line = previous_ending(*before);
        log::info("{}", line);
        run_.event(line);
        state_.stretches = before->stretches + 1;
        state_.seconds = before->seconds;
        state_.spans = before->spans;
      }
    } catch (const std::runtime_error& e) {
      log::warn("{}; counting this start as the run's first", e.what());
    }
  }
  earlier_seconds_ = state_.seconds;
  const double unix_now = unix_seconds();
  state_.spans.emplace_back(unix_now, unix_now);
  record("running");
}

void ProgressWriter::record(const std::string& status, std::optional<int> exit_code, const std::string& message) {
  state_.status = status;
  state_.exit_code = exit_code;
  state_.message = message;
  state_.generation = run_.generations_written();
  if (!state_.spans.empty()) {
    auto& span = state_.spans.back();
    span.second = unix_seconds();
    state_.seconds = earlier_seconds_ + (span.second - span.first);
  }
  std::string why = run_.why_gone();
  try {
    if (why.empty()) why = write_run_state(config_.output_dir, state_);
  } catch (const DiskFull&) {
    // The run's ending is recorded in the space run.json holds already; a
    // full disk while it runs ends the run.
    if (status != "running" && write_run_state_in_place(config_.output_dir, state_)) return;
    throw;
  }
  if (!why.empty())
    throw std::runtime_error(fmt::format("{}: the run folder can no longer be written ({}): ending the run; its "
                                         "newest complete checkpoint, if the folder still holds it, resumes it",
                                         config_.output_dir, why));
}

void ProgressWriter::generation_written(std::int64_t generation, Clock::time_point now) {
  record("running");
  const std::string objective = objective_name(config_);
  const BestCell best = best_cell(run_.generation_records(generation), objective);
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  const std::int64_t total = config_.training.generations;
  const double done = static_cast<double>(generation - resumed_after_);  // this session's generations
  const double eta = elapsed / done * static_cast<double>(total - generation);
  const std::optional<int> best_cell = best.cell >= 0 ? std::optional<int>(best.cell) : std::nullopt;
  const std::optional<double> best_score = best.cell >= 0 ? std::optional<double>(best.score) : std::nullopt;
  board_.generation_written(generation, now, best_cell, best_score);
  const std::string scored = best.cell >= 0  // data_parallel scores only some generations
                                 ? fmt::format("best mixture {} {:.4f} (cell {})", objective, best.score, best.cell)
                                 : std::string("not scored");
  const std::string line =
      fmt::format("generation {}/{}: {}, {:.1f} s elapsed, ~{:.0f} s left", generation, total, scored, elapsed, eta);
  if (progress_bar_) {  // a terminal: one line redrawn in place
    log::show_status_line(progress_line(Progress{generation, total, objective, best_cell, best_score, eta}));
    log::debug("{}", line);
  } else {
    log::info("{}", line);
  }
  preview(generation, best.cell);
}

void ProgressWriter::preview(std::int64_t generation, int best_cell) {
  // previews/gen-NNNNNN.png: the samples the generation's best cell sent.
  auto previews = run_.take_previews(generation);
  const auto it = previews.find(best_cell);
  if (it == previews.end()) return;
  const std::string path = run_.path(fmt::format("{}/gen-{:06d}.png", run_files::kPreviews, generation));
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_samples_png(config_, path, it->second, layout_.preview_title(generation, best_cell));
  board_.preview(generation, path,
                 layout_.one_record_per_generation() ? std::nullopt : std::optional<int>(best_cell));
  log::debug("preview of generation {} (cell {}): {}", generation, best_cell, path);
}

void ProgressWriter::report() const {
  try {
    write_run_report(config_.output_dir);
  } catch (const DiskFull&) {
    throw;  // the run cannot keep its records: it ends (kExitDiskFull)
  } catch (const std::exception& e) {
    log::warn("report.html not written: {}", e.what());
  }
}

void ProgressWriter::report_at_checkpoint(Clock::time_point now) {
  if (report_written_ == Clock::time_point{} || now - report_written_ >= kReportEvery) {
    report();
    report_written_ = now;
  }
}

void ProgressWriter::end_progress() const {
  if (progress_bar_) log::end_status_line();
}

}  // namespace cellgan
