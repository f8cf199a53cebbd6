// Tests of master/heartbeat_monitor.h: late, dead and recovered events driven by synthetic time points.
#include "master/heartbeat_monitor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace cellgan {
namespace {

using Clock = HeartbeatMonitor::Clock;
using Kind = HeartbeatMonitor::Event::Kind;
using Liveness = HeartbeatMonitor::Liveness;
using std::chrono::milliseconds;

Clock::time_point at(long ms) { return Clock::time_point{} + milliseconds(ms); }

// late after 1 s, dead after 5 s, watching from t = 0.
HeartbeatMonitor make_monitor(int workers) {
  return HeartbeatMonitor(workers, milliseconds(1000), milliseconds(5000), at(0));
}

TEST(HeartbeatMonitor, QuietAtTheStart) {
  HeartbeatMonitor m = make_monitor(3);
  EXPECT_TRUE(m.check(at(0)).empty());
  EXPECT_TRUE(m.check(at(999)).empty());
  for (int w = 1; w <= 3; ++w) {
    EXPECT_EQ(m.liveness(w), Liveness::kAlive);
    EXPECT_EQ(m.state(w), WorkerState::kInactive);
    EXPECT_EQ(m.generation(w), 0);
  }
  EXPECT_FALSE(m.all_finished());
  EXPECT_EQ(m.failed_worker(), 0);
}

TEST(HeartbeatMonitor, LateAfterLateAfterThenDeadAfterDeadAfter) {
  HeartbeatMonitor m = make_monitor(1);
  m.beat(1, WorkerState::kProcessing, 0, at(100));
  EXPECT_TRUE(m.check(at(1099)).empty());
  EXPECT_EQ(m.liveness(1), Liveness::kAlive);

  const auto late = m.check(at(1100));
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].kind, Kind::kLate);
  EXPECT_EQ(late[0].worker, 1);
  EXPECT_DOUBLE_EQ(late[0].silent_seconds, 1.0);
  EXPECT_EQ(m.liveness(1), Liveness::kLate);

  // Still late, but no second event for the same transition.
  EXPECT_TRUE(m.check(at(2000)).empty());
  EXPECT_TRUE(m.check(at(5099)).empty());
  EXPECT_EQ(m.liveness(1), Liveness::kLate);

  const auto dead = m.check(at(5100));
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].kind, Kind::kDead);
  EXPECT_EQ(dead[0].worker, 1);
  EXPECT_DOUBLE_EQ(dead[0].silent_seconds, 5.0);
  EXPECT_EQ(m.liveness(1), Liveness::kDead);

  EXPECT_TRUE(m.check(at(6000)).empty());
  EXPECT_TRUE(m.check(at(60000)).empty());
}

TEST(HeartbeatMonitor, SilentFromTheStartCountsFromStart) {
  HeartbeatMonitor m(2, milliseconds(300), milliseconds(800), at(10000));
  EXPECT_TRUE(m.check(at(10299)).empty());
  const auto late = m.check(at(10300));
  ASSERT_EQ(late.size(), 2u);
  EXPECT_EQ(late[0].worker, 1);
  EXPECT_EQ(late[1].worker, 2);
  EXPECT_EQ(late[0].kind, Kind::kLate);
  EXPECT_EQ(late[1].kind, Kind::kLate);
}

TEST(HeartbeatMonitor, RegularBeatsKeepAWorkerAlive) {
  HeartbeatMonitor m = make_monitor(2);
  for (long t = 0; t <= 20000; t += 500) {
    m.beat(1, WorkerState::kProcessing, t / 1000, at(t));
    m.beat(2, WorkerState::kProcessing, t / 1000, at(t));
    EXPECT_TRUE(m.check(at(t + 400)).empty()) << "at " << t;
  }
  EXPECT_EQ(m.liveness(1), Liveness::kAlive);
  EXPECT_EQ(m.liveness(2), Liveness::kAlive);
  EXPECT_EQ(m.generation(2), 20);
}

TEST(HeartbeatMonitor, ABeatFromALateWorkerRecoversIt) {
  HeartbeatMonitor m = make_monitor(1);
  ASSERT_EQ(m.check(at(1500)).size(), 1u);
  ASSERT_EQ(m.liveness(1), Liveness::kLate);

  m.beat(1, WorkerState::kProcessing, 4, at(4000));
  EXPECT_EQ(m.liveness(1), Liveness::kAlive);
  EXPECT_EQ(m.generation(1), 4);
  const auto events = m.check(at(4200));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::kRecovered);
  EXPECT_EQ(events[0].worker, 1);
  // Recovered only once.
  EXPECT_TRUE(m.check(at(4300)).empty());

  // No false dead: 5 s after the start, but only 1 s after the last beat.
  EXPECT_TRUE(m.check(at(4999)).empty());
  EXPECT_EQ(m.liveness(1), Liveness::kAlive);
  // Late again, counted from the last beat, then dead from the last beat.
  const auto late = m.check(at(5000));
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].kind, Kind::kLate);
  EXPECT_TRUE(m.check(at(8999)).empty());
  const auto dead = m.check(at(9000));
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].kind, Kind::kDead);
}

TEST(HeartbeatMonitor, ASlowWorkerThatKeepsBeatingIsNeverDead) {
  HeartbeatMonitor m = make_monitor(1);
  int late = 0, recovered = 0;
  // Beats every 3 s: late between beats, never silent for 5 s.
  for (long t = 0; t <= 30000; t += 100) {
    if (t % 3000 == 0 && t > 0) m.beat(1, WorkerState::kProcessing, t / 3000, at(t));
    for (const auto& e : m.check(at(t))) {
      ASSERT_NE(e.kind, Kind::kDead) << "at " << t;
      if (e.kind == Kind::kLate) ++late;
      if (e.kind == Kind::kRecovered) ++recovered;
    }
  }
  EXPECT_EQ(m.liveness(1), Liveness::kAlive);  // the last check came right after the beat at 30 s
  EXPECT_EQ(late, 10);
  EXPECT_EQ(recovered, 10);
}

TEST(HeartbeatMonitor, ADeadWorkerStaysDead) {
  HeartbeatMonitor m = make_monitor(2);
  m.beat(2, WorkerState::kProcessing, 0, at(4000));
  const auto events = m.check(at(6000));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].worker, 1);
  EXPECT_EQ(events[0].kind, Kind::kDead);  // straight to dead: never checked while late
  EXPECT_EQ(events[1].worker, 2);
  EXPECT_EQ(events[1].kind, Kind::kLate);

  m.beat(1, WorkerState::kProcessing, 3, at(6100));
  EXPECT_EQ(m.liveness(1), Liveness::kDead);
  const auto after = m.check(at(6200));
  for (const auto& e : after) EXPECT_NE(e.worker, 1) << to_string(e.kind);
  m.beat(1, WorkerState::kFinished, 10, at(6300));
  EXPECT_EQ(m.liveness(1), Liveness::kDead);
  m.beat(2, WorkerState::kFinished, 10, at(6300));
  EXPECT_FALSE(m.all_finished());
}

TEST(HeartbeatMonitor, FinishedWorkersAreNotReported) {
  HeartbeatMonitor m = make_monitor(2);
  m.beat(1, WorkerState::kFinished, 10, at(100));
  m.beat(2, WorkerState::kProcessing, 10, at(100));
  const auto events = m.check(at(2000));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].worker, 2);
  EXPECT_EQ(events[0].kind, Kind::kLate);
  for (const auto& e : m.check(at(100000))) EXPECT_NE(e.worker, 1) << to_string(e.kind);
  EXPECT_EQ(m.liveness(1), Liveness::kAlive);
  EXPECT_EQ(m.state(1), WorkerState::kFinished);
  EXPECT_EQ(m.generation(1), 10);
}

TEST(HeartbeatMonitor, AllFinished) {
  HeartbeatMonitor m = make_monitor(3);
  m.beat(1, WorkerState::kFinished, 5, at(10));
  m.beat(3, WorkerState::kFinished, 5, at(10));
  EXPECT_FALSE(m.all_finished());
  m.beat(2, WorkerState::kProcessing, 5, at(20));
  EXPECT_FALSE(m.all_finished());
  m.beat(2, WorkerState::kFinished, 5, at(30));
  EXPECT_TRUE(m.all_finished());
  EXPECT_TRUE(m.check(at(100000)).empty());
}

TEST(HeartbeatMonitor, FailedWorkerIsTheFirstInStateFailed) {
  HeartbeatMonitor m = make_monitor(4);
  EXPECT_EQ(m.failed_worker(), 0);
  m.beat(3, WorkerState::kFailed, 2, at(10));
  EXPECT_EQ(m.failed_worker(), 3);
  m.beat(2, WorkerState::kFailed, 1, at(20));
  EXPECT_EQ(m.failed_worker(), 2);
  m.beat(4, WorkerState::kFinished, 5, at(30));
  EXPECT_EQ(m.failed_worker(), 2);
  EXPECT_EQ(m.state(3), WorkerState::kFailed);
}

TEST(HeartbeatMonitor, EventsComeInWorkerOrder) {
  HeartbeatMonitor m = make_monitor(4);
  m.beat(3, WorkerState::kProcessing, 0, at(500));
  m.beat(1, WorkerState::kProcessing, 0, at(500));
  const auto first = m.check(at(1000));  // 2 and 4 late
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].worker, 2);
  EXPECT_EQ(first[1].worker, 4);
  const auto second = m.check(at(1500));  // 1 and 3 late
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].worker, 1);
  EXPECT_EQ(second[1].worker, 3);
}

TEST(HeartbeatMonitor, EventKindNames) {
  EXPECT_STREQ(to_string(Kind::kLate), "late");
  EXPECT_STREQ(to_string(Kind::kRecovered), "recovered");
  EXPECT_STREQ(to_string(Kind::kDead), "dead");
}

}  // namespace
}  // namespace cellgan
