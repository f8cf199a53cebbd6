// A polling loop's sleep when it found nothing to do: it starts at `min`,
// doubles on every idle round up to `max`, and drops back to `min` as soon
// as the loop does some work. An idle loop then wakes rarely, and a busy
// one still answers within `min`.
//
// Thread-safety: belongs to the one loop that uses it.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace cellgan {

class IdleBackoff {
 public:
  using Duration = std::chrono::microseconds;
  IdleBackoff(Duration min, Duration max) : min_(min), max_(max), next_(min) {}

  // Call once per round: `did_work` resets the sleep, otherwise sleeps.
  void after_round(bool did_work) {
    if (did_work) {
      next_ = min_;
      return;
    }
    std::this_thread::sleep_for(idle_round());
  }

  // For a loop that sleeps by itself (e.g. on a condition variable it can
  // be woken from): the sleep of this idle round, and the next one doubles.
  Duration idle_round() {
    const Duration sleep = next_;
    next_ = std::min(next_ * 2, max_);
    return sleep;
  }

  // The sleep the next idle round will take.
  Duration next_sleep() const { return next_; }

 private:
  Duration min_;
  Duration max_;
  Duration next_;
};

}  // namespace cellgan
