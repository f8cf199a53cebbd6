// The live state of a run, for the status server (status_server.h) and the
// progress line: the grid, each cell's generation, score and worker, each
// worker's state and heartbeat age, the run's phase, ETA and best cell, the
// latest events.log lines and the latest preview. The master's control
// thread writes it as things happen; readers take a snapshot, a plain copy.
//
// Times: the board is given steady-clock times by its writer (the master's
// clock, which a test may fake) and the reader's `now` at snapshot(); ages
// and the ETA are differences of the two.
//
// Thread-safety: every member function may be called from any thread; one
// mutex inside guards everything, and snapshot() copies under it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "common/thread_annotations.h"

namespace cellgan {

struct CellStatus {
  int cell = 0;  // row-major id
  int row = 0;
  int col = 0;
  std::int64_t generation = 0;  // generations completed
  std::optional<double> score;  // the latest mixture objective (StatusSnapshot::objective)
  int worker = 0;               // the owning worker's world rank (0: not known)
  // waiting (no generation yet), training, done (every generation), or the
  // owner's state when that is dead or failed.
  std::string state = "waiting";
};

struct WorkerStatus {
  int rank = 0;  // world rank
  // starting (before its first message), processing, finished, late, dead,
  // failed, or any state the master sets (e.g. rehomed).
  std::string state = "starting";
  std::int64_t generation = 0;
  double heartbeat_age_seconds = 0.0;  // since its last message (since the start before one)
};

struct StatusEvent {
  double seconds = 0.0;  // since the start of the run
  std::string line;      // as in events.log, without its timestamp
};

struct StatusSnapshot {
  // starting, training, scoring (the final gather and scores), finished, failed.
  std::string phase = "starting";
  std::string detail;  // why it failed; what it finished with
  int rows = 0;
  int cols = 0;
  std::string layout;
  std::string objective;  // the score's name (fid, mode_tvd, ...)
  std::int64_t generations_total = 0;
  std::int64_t generations_done = 0;  // complete generations written
  double elapsed_seconds = 0.0;
  std::optional<double> eta_seconds;  // from the pace so far, once a generation is done
  std::optional<int> best_cell;       // lowest score of the last complete generation
  std::optional<double> best_score;
  std::vector<CellStatus> cells;      // by cell id
  std::vector<WorkerStatus> workers;  // by rank, rank 1 first
  std::vector<StatusEvent> events;    // the latest kEventsKept, oldest first
  std::int64_t events_total = 0;
  std::optional<std::int64_t> preview_generation;
  std::string preview_path;  // previews/gen-NNNNNN.png; empty: none yet
  std::optional<int> preview_cell;  // the cell whose samples it shows
};

class StatusBoard {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kEventsKept = 100;

  // `owners[cell]` is the world rank of the worker that trains it at the
  // start. Throws std::invalid_argument unless rows, cols >= 1, workers >= 0
  // and owners has rows * cols entries.
  StatusBoard(int rows, int cols, std::string layout, std::string objective, std::int64_t generations,
              int workers, const std::vector<int>& owners, Clock::time_point started);

  void set_phase(const std::string& phase, const std::string& detail = "");
  // A cell completed `generation` on `worker`, with its mixture's score
  // (non-finite scores are kept as no score). Out-of-range cells and
  // workers are std::invalid_argument.
  void cell_generation(int cell, int worker, std::int64_t generation, std::optional<double> score);
  // Moves a cell to another worker (re-homing).
  void set_cell_worker(int cell, int worker);
  // Every cell completed `generation` at `now`; its best cell and score.
  void generation_written(std::int64_t generation, Clock::time_point now, std::optional<int> best_cell,
                          std::optional<double> best_score);
  // A message from a worker at `now`: its state and generation.
  void worker_heard(int worker, const std::string& state, std::int64_t generation, Clock::time_point now);
  // A state change without a message (late, dead, failed...).
  void set_worker_state(int worker, const std::string& state);
  void event(const std::string& line, Clock::time_point now);
  void preview(std::int64_t generation, const std::string& path, std::optional<int> cell = std::nullopt);

  StatusSnapshot snapshot(Clock::time_point now) const;

 private:
  struct Worker {
    std::string state = "starting";
    std::int64_t generation = 0;
    std::optional<Clock::time_point> heard;
  };
  void check_cell(int cell) const REQUIRES(mutex_);
  void check_worker(int worker) const REQUIRES(mutex_);

  mutable Mutex mutex_;
  const Clock::time_point started_;
  // cells, phase, grid, best, preview; workers and events filled at snapshot()
  StatusSnapshot s_ GUARDED_BY(mutex_);
  std::vector<Worker> workers_ GUARDED_BY(mutex_);  // index = rank - 1
  std::deque<StatusEvent> events_ GUARDED_BY(mutex_);
  std::optional<Clock::time_point> last_generation_at_ GUARDED_BY(mutex_);
};

}  // namespace cellgan
