// The stop protocol's state on the master: a stop asked for (a signal, the
// launcher, a test) becomes a checkpoint at one generation every worker can
// reach, then the end of the run with exit 75.
//
//   none --request()--> asked --advance(): kPause--> pausing (every live
//   worker is asked where it is; paused() records the answers)
//   pausing --advance(), every live worker answered: kStopAt(g)--> stopping at
//   g = furthest + 1 (a worker may finish one more generation before it
//   hears of the stop); or kFinishInstead when g is the last generation
//   stopping --advance(), the checkpoint of g complete: kStop(g)
//
// The master carries out each step (sends, events.log, the ending); the
// protocol only decides, so it is tested without ranks or clocks.
//
// Thread-safety: request() from any thread (a signal's handler thread);
// everything else on the master's control loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/thread_annotations.h"

namespace cellgan {

class StopProtocol {
 public:
  struct Step {
    enum class Kind { kNothing, kPause, kStopAt, kFinishInstead, kStop };
    Kind kind = Kind::kNothing;
    std::int64_t generation = 0;  // kStopAt, kFinishInstead, kStop: the generation to stop at
    std::string why;              // kPause: the request
  };

  explicit StopProtocol(int workers) : paused_at_(static_cast<std::size_t>(std::max(workers, 0))) {}

  // Asks for a stop; a second request while one is under way is only logged.
  void request(const std::string& why);
  // Worker rank `worker` (1..W) had completed `generation` when it paused.
  void paused(int worker, std::int64_t generation);
  // The next step, given which workers are alive (by rank, 1..W), the
  // newest complete checkpoint and the run's generations.
  Step advance(const std::vector<bool>& alive, std::int64_t last_checkpoint, std::int64_t generations);
  // A stop is under way (asked and not carried on past).
  bool active() const { return state_ != State::kNone; }

 private:
  enum class State { kNone, kPausing, kStopping };
  State state_ = State::kNone;
  std::int64_t stop_at_ = 0;
  std::vector<std::optional<std::int64_t>> paused_at_;  // by worker
  Mutex mutex_;
  std::optional<std::string> request_ GUARDED_BY(mutex_);
};

}  // namespace cellgan
