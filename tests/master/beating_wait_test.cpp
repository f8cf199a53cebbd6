// Work on a thread while the caller beats.
#include "master/beating_wait.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

namespace cellgan {
namespace {

using std::chrono::milliseconds;

TEST(BeatTimer, DueOncePerInterval) {
  const auto t0 = BeatTimer::Clock::now();
  BeatTimer timer(milliseconds(100));
  EXPECT_TRUE(timer.due(t0));
  EXPECT_FALSE(timer.due(t0 + milliseconds(99)));
  EXPECT_TRUE(timer.due(t0 + milliseconds(100)));
  EXPECT_FALSE(timer.due(t0 + milliseconds(150)));
  BeatTimer later(milliseconds(100), false);
  EXPECT_FALSE(later.due());
}

TEST(RunWhileBeating, BeatsUntilTheWorkIsDone) {
  int beats = 0, pumps = 0;
  bool done = false;
  const auto began = std::chrono::steady_clock::now();
  run_while_beating([&] {
    std::this_thread::sleep_for(milliseconds(250));
    done = true;
  }, milliseconds(50), [&] { ++beats; }, [&] { ++pumps; }, "test", 0);
  const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - began);
  EXPECT_TRUE(done);
  EXPECT_GE(beats, 3);                   // at 0, 50, 100, 150, 200 ms (fewer on a loaded machine)
  EXPECT_LE(beats, took / milliseconds(50) + 1);  // never more than one per interval
  EXPECT_GT(pumps, beats);
}

TEST(BeatUntil, BeatsWhenDueRunsRoundsAndSleepsOnlyAfterIdleOnes) {
  BeatTimer timer(milliseconds(1000));  // due at once, then not again within the test
  IdleBackoff backoff(milliseconds(30), milliseconds(30));
  int beats = 0, rounds = 0;
  const auto began = std::chrono::steady_clock::now();
  beat_until([&] { return rounds == 6; }, timer, [&] { ++beats; },
             [&] { return ++rounds % 2 == 0; },  // every other round did something
             backoff);
  const auto took = std::chrono::steady_clock::now() - began;
  EXPECT_EQ(beats, 1);
  EXPECT_EQ(rounds, 6);
  EXPECT_GE(took, milliseconds(90)) << "three idle rounds sleep 30 ms each";
}

TEST(BeatUntil, ChecksDoneFirst) {
  BeatTimer timer(milliseconds(10));
  IdleBackoff backoff(milliseconds(1), milliseconds(1));
  int calls = 0;
  beat_until([] { return true; }, timer, [&] { ++calls; }, [&] { return ++calls > 0; }, backoff);
  EXPECT_EQ(calls, 0);
}

TEST(RunWhileBeating, RethrowsWhatTheWorkThrew) {
  EXPECT_THROW(run_while_beating([] { throw std::invalid_argument("bad"); }, milliseconds(10), [] {}, [] {}, "test", 0),
               std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
