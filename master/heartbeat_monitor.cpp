// Worker liveness from heartbeats (see heartbeat_monitor.h).
#include "master/heartbeat_monitor.h"

namespace cellgan {

HeartbeatMonitor::HeartbeatMonitor(int workers, std::chrono::milliseconds late_after,
                                   std::chrono::milliseconds dead_after, Clock::time_point start)
    : late_after_(late_after), dead_after_(dead_after), slots_(static_cast<std::size_t>(workers) + 1) {
  for (auto& s : slots_) s.last_beat = start;
}

void HeartbeatMonitor::beat(int worker, WorkerState state, std::int64_t generation, Clock::time_point now) {
  Slot& s = slots_.at(worker);
  if (s.liveness == Liveness::kDead) return;
  s.last_beat = now;
  s.state = state;
  s.generation = generation;
  if (s.liveness == Liveness::kLate) {
    s.liveness = Liveness::kAlive;
    s.recovered_pending = true;
  }
}

void HeartbeatMonitor::restart(Clock::time_point now) {
  for (std::size_t w = 1; w < slots_.size(); ++w)
    if (slots_[w].liveness != Liveness::kDead) slots_[w].last_beat = now;
}

std::vector<HeartbeatMonitor::Event> HeartbeatMonitor::check(Clock::time_point now) {
  std::vector<Event> events;
  for (std::size_t w = 1; w < slots_.size(); ++w) {
    Slot& s = slots_[w];
    const double silent = std::chrono::duration<double>(now - s.last_beat).count();
    if (s.recovered_pending) {
      events.push_back({Event::Kind::kRecovered, static_cast<int>(w), silent});
      s.recovered_pending = false;
    }
    if (s.state == WorkerState::kFinished || s.liveness == Liveness::kDead) continue;
    if (now - s.last_beat >= dead_after_) {
      s.liveness = Liveness::kDead;
      events.push_back({Event::Kind::kDead, static_cast<int>(w), silent});
    } else if (now - s.last_beat >= late_after_ && s.liveness == Liveness::kAlive) {
      s.liveness = Liveness::kLate;
      events.push_back({Event::Kind::kLate, static_cast<int>(w), silent});
    }
  }
  return events;
}

bool HeartbeatMonitor::all_finished() const {
  for (std::size_t w = 1; w < slots_.size(); ++w)
    if (slots_[w].state != WorkerState::kFinished) return false;
  return true;
}

int HeartbeatMonitor::failed_worker() const {
  for (std::size_t w = 1; w < slots_.size(); ++w)
    if (slots_[w].state == WorkerState::kFailed) return static_cast<int>(w);
  return 0;
}

const char* to_string(HeartbeatMonitor::Event::Kind kind) {
  switch (kind) {
    case HeartbeatMonitor::Event::Kind::kLate: return "late";
    case HeartbeatMonitor::Event::Kind::kRecovered: return "recovered";
    case HeartbeatMonitor::Event::Kind::kDead: return "dead";
  }
  return "?";
}

}  // namespace cellgan
