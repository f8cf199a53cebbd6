// Work on a thread while this one beats (see beating_wait.h).
#include "master/beating_wait.h"

#include <atomic>
#include <exception>
#include <thread>

#include "common/log.h"

namespace cellgan {

void beat_until(const std::function<bool()>& done, BeatTimer& timer, const std::function<void()>& beat,
                const std::function<bool()>& round, IdleBackoff& backoff) {
  while (!done()) {
    if (timer.due()) beat();
    backoff.after_round(round());
  }
}

void run_while_beating(const std::function<void()>& work, std::chrono::milliseconds interval,
                       const std::function<void()>& beat, const std::function<void()>& pump,
                       const std::string& thread_name, int rank) {
  std::exception_ptr error;
  std::atomic<bool> finished{false};
  std::thread worker([&] {
    log::set_thread_name(thread_name);
    log::set_thread_rank(rank);
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
    finished = true;
  });
  BeatTimer timer(interval);
  IdleBackoff every_5_ms(std::chrono::milliseconds(5), std::chrono::milliseconds(5));
  beat_until([&] { return finished.load(); }, timer, beat,
             [&] {
               pump();
               return false;
             },
             every_5_ms);
  worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace cellgan
