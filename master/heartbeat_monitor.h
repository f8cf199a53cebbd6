// Liveness of the workers: heartbeat times in,
// late and dead workers out. No MPI, no clock of its own: the caller passes
// the time, so tests drive it directly.
//
// A worker is `late` once no heartbeat has come for late_after, and `dead`
// after dead_after. A heartbeat from a late worker brings it back
// (`recovered`): a slow worker is reported late, never falsely dead. A dead
// worker stays dead. Workers that have finished are not watched.
//
// Thread-safety: one thread (the master's control loop).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/comm/protocol.h"

namespace cellgan {

class HeartbeatMonitor {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Liveness { kAlive, kLate, kDead };
  struct Event {
    enum class Kind { kLate, kRecovered, kDead } kind;
    int worker;  // 1..W (world rank)
    double silent_seconds;
  };

  HeartbeatMonitor(int workers, std::chrono::milliseconds late_after, std::chrono::milliseconds dead_after,
                   Clock::time_point start);

  void beat(int worker, WorkerState state, std::int64_t generation, Clock::time_point now);
  // Every worker not dead counts as heard from at `now`: for when the
  // master itself was stalled, so its own silence is not taken for theirs.
  void restart(Clock::time_point now);
  // Changes since the last call, in worker order.
  std::vector<Event> check(Clock::time_point now);

  Liveness liveness(int worker) const { return slots_.at(worker).liveness; }
  WorkerState state(int worker) const { return slots_.at(worker).state; }
  std::int64_t generation(int worker) const { return slots_.at(worker).generation; }
  // True when every worker has reported kFinished.
  bool all_finished() const;
  // The first worker in state kFailed, or 0.
  int failed_worker() const;

 private:
  struct Slot {
    Clock::time_point last_beat;
    WorkerState state = WorkerState::kInactive;
    std::int64_t generation = 0;
    Liveness liveness = Liveness::kAlive;
    bool recovered_pending = false;
  };
  std::chrono::milliseconds late_after_, dead_after_;
  std::vector<Slot> slots_;  // index = world rank; slot 0 unused
};

const char* to_string(HeartbeatMonitor::Event::Kind kind);

}  // namespace cellgan
