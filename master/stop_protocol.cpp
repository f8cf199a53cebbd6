// The stop protocol's decisions (see stop_protocol.h).
#include "master/stop_protocol.h"

#include <algorithm>

#include "common/log.h"

namespace cellgan {

void StopProtocol::request(const std::string& why) {
  MutexLock lock(mutex_);
  if (!request_) request_ = why;
}

void StopProtocol::paused(int worker, std::int64_t generation) {
  paused_at_.at(static_cast<std::size_t>(worker - 1)) = generation;
}

StopProtocol::Step StopProtocol::advance(const std::vector<bool>& alive, std::int64_t last_checkpoint,
                                         std::int64_t generations) {
  using Kind = Step::Kind;
  if (state_ == State::kNone) {
    std::optional<std::string> why;
    {
      MutexLock lock(mutex_);
      why.swap(request_);
    }
    if (!why) return {};
    paused_at_.assign(paused_at_.size(), std::nullopt);
    state_ = State::kPausing;
    return {Kind::kPause, 0, *why};
  }
  if (state_ == State::kPausing) {
    std::int64_t furthest = 0;
    for (std::size_t i = 0; i < paused_at_.size(); ++i) {
      if (i >= alive.size() || !alive[i]) continue;
      if (!paused_at_[i]) return {};
      furthest = std::max(furthest, *paused_at_[i]);
    }
    stop_at_ = furthest + 1;
    state_ = stop_at_ >= generations ? State::kNone : State::kStopping;
    return {stop_at_ >= generations ? Kind::kFinishInstead : Kind::kStopAt, stop_at_, ""};
  }
  {
    MutexLock lock(mutex_);
    if (request_) log::warn("already stopping ({}); SIGKILL ends the run at once", *request_);
    request_.reset();
  }
  if (last_checkpoint < stop_at_) return {};
  return {Kind::kStop, stop_at_, ""};
}

}  // namespace cellgan
