// Work on a thread while this one beats (see beating_wait.h).
#include "master/beating_wait.h"

#include <atomic>
#include <exception>
#include <thread>

#include "common/log.h"

namespace cellgan {

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
  while (!finished) {
    if (timer.due()) beat();
    pump();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace cellgan
