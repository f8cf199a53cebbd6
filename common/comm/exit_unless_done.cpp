// The deadline of a blocking MPI call (see exit_unless_done.h).
#include "common/comm/exit_unless_done.h"

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/core.h>

#include "common/error.h"
#include "common/launch_rank.h"
#include "common/log.h"

namespace cellgan {

struct ExitUnlessDone::State {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
};

ExitUnlessDone::ExitUnlessDone(std::string what, std::chrono::seconds limit) : state_(std::make_shared<State>()) {
  std::thread([state = state_, what = std::move(what), limit] {
    std::unique_lock<std::mutex> lock(state->mutex);
    if (state->changed.wait_for(lock, limit, [&] { return state->done; })) return;
    log::last_line(fmt::format("cellgan: stopped: {} has not returned after {} s (a rank lost?): run the same "
                               "command again with --resume auto",
                               what, limit.count()));
    report_exit_code(kExitRestart);
    std::_Exit(kExitRestart);
  }).detach();
}

ExitUnlessDone::~ExitUnlessDone() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->done = true;
  }
  state_->changed.notify_all();
}

}  // namespace cellgan
