// The live state of a run (see status_board.h).
#include "master/status_board.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cellgan {
namespace {

double seconds_between(StatusBoard::Clock::time_point from, StatusBoard::Clock::time_point to) {
  return std::max(0.0, std::chrono::duration<double>(to - from).count());
}

}  // namespace

StatusBoard::StatusBoard(int rows, int cols, std::string layout, std::string objective, std::int64_t generations,
                         int workers, const std::vector<int>& owners, Clock::time_point started)
    : started_(started) {
  if (rows < 1 || cols < 1 || workers < 0 || owners.size() != static_cast<std::size_t>(rows) * cols)
    throw std::invalid_argument(fmt::format("StatusBoard: {}x{} grid, {} workers, {} owners", rows, cols, workers,
                                            owners.size()));
  s_.rows = rows;
  s_.cols = cols;
  s_.layout = std::move(layout);
  s_.objective = std::move(objective);
  s_.generations_total = generations;
  workers_.resize(static_cast<std::size_t>(workers));
  for (int c = 0; c < rows * cols; ++c) {
    CellStatus cell;
    cell.cell = c;
    cell.row = c / cols;
    cell.col = c % cols;
    cell.worker = owners[static_cast<std::size_t>(c)];
    s_.cells.push_back(cell);
  }
}

void StatusBoard::check_cell(int cell) const {
  if (cell < 0 || cell >= static_cast<int>(s_.cells.size()))
    throw std::invalid_argument(fmt::format("StatusBoard: cell {} outside the {}x{} grid", cell, s_.rows, s_.cols));
}

void StatusBoard::check_worker(int worker) const {
  if (worker < 1 || worker > static_cast<int>(workers_.size()))
    throw std::invalid_argument(fmt::format("StatusBoard: worker rank {} of {}", worker, workers_.size()));
}

void StatusBoard::set_phase(const std::string& phase, const std::string& detail) {
  MutexLock lock(mutex_);
  s_.phase = phase;
  s_.detail = detail;
}

void StatusBoard::cell_generation(int cell, int worker, std::int64_t generation, std::optional<double> score) {
  MutexLock lock(mutex_);
  check_cell(cell);
  check_worker(worker);
  CellStatus& c = s_.cells[static_cast<std::size_t>(cell)];
  c.worker = worker;
  c.generation = std::max(c.generation, generation);
  c.score = score && std::isfinite(*score) ? score : std::nullopt;
}

void StatusBoard::set_cell_worker(int cell, int worker) {
  MutexLock lock(mutex_);
  check_cell(cell);
  check_worker(worker);
  s_.cells[static_cast<std::size_t>(cell)].worker = worker;
}

void StatusBoard::generation_written(std::int64_t generation, Clock::time_point now, std::optional<int> best_cell,
                                     std::optional<double> best_score) {
  MutexLock lock(mutex_);
  s_.generations_done = std::max(s_.generations_done, generation);
  last_generation_at_ = now;
  s_.best_cell = best_cell;
  s_.best_score = best_score && std::isfinite(*best_score) ? best_score : std::nullopt;
}

void StatusBoard::worker_heard(int worker, const std::string& state, std::int64_t generation, Clock::time_point now) {
  MutexLock lock(mutex_);
  check_worker(worker);
  Worker& w = workers_[static_cast<std::size_t>(worker - 1)];
  w.state = state;
  w.generation = std::max(w.generation, generation);
  w.heard = now;
}

void StatusBoard::set_worker_state(int worker, const std::string& state) {
  MutexLock lock(mutex_);
  check_worker(worker);
  workers_[static_cast<std::size_t>(worker - 1)].state = state;
}

void StatusBoard::event(const std::string& line, Clock::time_point now) {
  MutexLock lock(mutex_);
  events_.push_back(StatusEvent{seconds_between(started_, now), line});
  while (events_.size() > kEventsKept) events_.pop_front();
  ++s_.events_total;
}

void StatusBoard::preview(std::int64_t generation, const std::string& path, std::optional<int> cell) {
  MutexLock lock(mutex_);
  s_.preview_generation = generation;
  s_.preview_path = path;
  s_.preview_cell = cell;
}

StatusSnapshot StatusBoard::snapshot(Clock::time_point now) const {
  MutexLock lock(mutex_);
  StatusSnapshot out = s_;
  out.elapsed_seconds = seconds_between(started_, now);
  if (last_generation_at_ && s_.generations_done > 0) {
    const double per_generation = seconds_between(started_, *last_generation_at_) / s_.generations_done;
    const double left = per_generation * static_cast<double>(s_.generations_total - s_.generations_done) -
                        seconds_between(*last_generation_at_, now);
    out.eta_seconds = std::max(0.0, left);
  }
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const Worker& w = workers_[i];
    out.workers.push_back(WorkerStatus{static_cast<int>(i + 1), w.state, w.generation,
                                       seconds_between(w.heard.value_or(started_), now)});
  }
  for (CellStatus& c : out.cells) {
    const std::string* owner = c.worker >= 1 && c.worker <= static_cast<int>(workers_.size())
                                   ? &workers_[static_cast<std::size_t>(c.worker - 1)].state
                                   : nullptr;
    if (owner && (*owner == "dead" || *owner == "failed"))
      c.state = *owner;
    else if (c.generation >= s_.generations_total)
      c.state = "done";
    else
      c.state = c.generation > 0 ? "training" : "waiting";
  }
  out.events.assign(events_.begin(), events_.end());
  return out;
}

}  // namespace cellgan
