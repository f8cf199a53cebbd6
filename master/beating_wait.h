// Keeping the workers' waits alive while the master is busy. A worker
// waiting for the master (the start message, go, the end of the run) gives
// up after a deadline unless the master beats to it; every long step of the
// master (reading the input, scoring the final ensembles) therefore runs on
// a thread of its own while the master's thread keeps beating.
//
// Thread-safety: BeatTimer belongs to one thread. beat_until runs on the
// calling thread; run_while_beating runs `work` on a new thread and `beat`
// on the calling one.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "common/idle_backoff.h"

namespace cellgan {

// When the next beat is due.
class BeatTimer {
 public:
  using Clock = std::chrono::steady_clock;
  // `first_now`: the first due() at or after it is true at once.
  explicit BeatTimer(std::chrono::milliseconds interval, bool first_now = true)
      : interval_(interval), last_(first_now ? Clock::time_point{} : Clock::now()) {}
  // True (and the timer restarts) when `interval` has passed since the last true.
  bool due(Clock::time_point now = Clock::now()) {
    if (last_ != Clock::time_point{} && now - last_ < interval_) return false;
    last_ = now;
    return true;
  }

 private:
  std::chrono::milliseconds interval_;
  Clock::time_point last_;
};

// The master's one beating loop: until `done()`, calls `beat()` whenever
// `timer` is due, then `round()`, which returns whether it did something;
// after a round that did nothing, `backoff` sleeps (idle_backoff.h).
void beat_until(const std::function<bool()>& done, BeatTimer& timer, const std::function<void()>& beat,
                const std::function<bool()>& round, IdleBackoff& backoff);

// Runs `work` on a thread named `thread_name` (with `rank` in its log
// lines) while this thread calls `beat()` every `interval` and `pump()`
// every 5 ms in between (sending and receiving what is pending), by
// beat_until. Returns once `work` has returned; rethrows what it threw.
void run_while_beating(const std::function<void()>& work, std::chrono::milliseconds interval,
                       const std::function<void()>& beat, const std::function<void()>& pump,
                       const std::string& thread_name, int rank);

}  // namespace cellgan
