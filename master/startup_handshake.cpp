// The master's side of start-up (see startup_handshake.h).
#include "master/startup_handshake.h"

#include <fmt/format.h>

#include <stdexcept>

#include "common/config.h"
#include "common/error.h"
#include "master/beating_wait.h"

namespace cellgan {

void StartupHandshake::check_and_tell(const std::function<StartMessage()>& check) {
  StartMessage verdict;
  try {
    // The workers wait for the start message with the default deadline; the
    // heartbeats tell them the master is alive while it reads its inputs.
    run_while_beating([&] { verdict = check(); }, std::chrono::milliseconds(RuntimeConfig{}.heartbeat_interval_ms),
                      [this] {
                        for (int w = 1; w <= workers_; ++w) world_.send(w, kTagMasterHeartbeat, Bytes{});
                      },
                      [this] { world_.pending_sends(); }, "check", rank_);
  } catch (const std::exception& e) {
    const Bytes no = encode(StartMessage{false, exit_code_of(e), e.what(), "", "", 0, ""});
    for (int w = 1; w <= workers_; ++w) world_.send(w, kTagStart, no);
    flush_sends(world_, start_timeout());
    throw;
  }
  const Bytes yes = encode(verdict);
  for (int w = 1; w <= workers_; ++w) world_.send(w, kTagStart, yes);
}

StartupHandshake::Readiness StartupHandshake::wait_until_ready(
    std::chrono::milliseconds dead_after, std::chrono::milliseconds beat_interval,
    const std::function<void(int, const IdentityMessage&)>& identity) {
  const auto deadline = std::chrono::steady_clock::now() + dead_after;
  std::vector<bool> ready(static_cast<std::size_t>(workers_), false);
  std::size_t count = 0;
  bool timed_out = false;
  Readiness out;
  IdleBackoff backoff(std::chrono::microseconds(200), std::chrono::milliseconds(5));
  BeatTimer timer(beat_interval, false);
  const auto beat = [&] {  // the ready workers wait for go with a deadline
    for (int w = 1; w <= workers_; ++w)
      if (ready[static_cast<std::size_t>(w - 1)]) world_.send(w, kTagMasterHeartbeat, Bytes{});
    world_.pending_sends();
  };
  const auto round = [&] {
    auto msg = world_.try_receive();
    if (!msg) return timed_out = std::chrono::steady_clock::now() >= deadline;
    if (msg->tag == kTagIdentity) {
      identity(msg->source, decode_identity(msg->payload));
    } else if (msg->tag == kTagFailure) {
      out.failure.emplace(msg->source, decode_failure(msg->payload));
    } else if (msg->tag == kTagReady) {
      const std::size_t i = static_cast<std::size_t>(msg->source - 1);
      if (!ready[i]) ++count;
      ready[i] = true;
    } else if (msg->tag != kTagMasterHeartbeat && msg->tag != kTagHeartbeat) {
      throw std::logic_error(
          fmt::format("start-up: tag {} from worker rank {} before it was ready", msg->tag, msg->source));
    }
    return true;
  };
  beat_until([&] { return count == ready.size() || timed_out || out.failure; }, timer, beat, round, backoff);
  for (int w = 1; w <= workers_; ++w) {
    if (ready[static_cast<std::size_t>(w - 1)])
      out.ready.push_back(w);
    else if (timed_out)
      out.silent.push_back(w);
  }
  return out;
}

void StartupHandshake::prepare_and_go(const std::function<void()>& prepare, std::chrono::milliseconds beat_interval,
                                      const std::vector<int>& members) {
  run_while_beating(prepare, beat_interval,
                    [&] {
                      for (int w : members) world_.send(w, kTagMasterHeartbeat, Bytes{});
                    },
                    [this] { world_.pending_sends(); }, "prepare", rank_);
  const Bytes go = encode(MembersMessage{std::vector<std::int32_t>(members.begin(), members.end()), 0, "",
                                         kLocalGroupTag});
  for (int w : members) world_.send(w, kTagGo, go);
}

}  // namespace cellgan
