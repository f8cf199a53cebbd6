// Tests of common/idle_backoff.h: idle rounds double the sleep up to the
// cap, a round with work drops it back to the minimum, and an idle round
// really sleeps.
#include "common/idle_backoff.h"

#include <gtest/gtest.h>

#include <chrono>

namespace cellgan {
namespace {

using std::chrono::microseconds;

TEST(IdleBackoff, DoublesWhileIdleUpToTheCap) {
  IdleBackoff backoff(microseconds(10), microseconds(50));
  EXPECT_EQ(backoff.next_sleep(), microseconds(10));
  backoff.after_round(false);
  EXPECT_EQ(backoff.next_sleep(), microseconds(20));
  backoff.after_round(false);
  EXPECT_EQ(backoff.next_sleep(), microseconds(40));
  backoff.after_round(false);
  EXPECT_EQ(backoff.next_sleep(), microseconds(50));
  backoff.after_round(false);
  EXPECT_EQ(backoff.next_sleep(), microseconds(50));
}

TEST(IdleBackoff, WorkResetsToTheMinimum) {
  IdleBackoff backoff(microseconds(10), microseconds(100000));
  backoff.after_round(false);
  backoff.after_round(false);
  ASSERT_EQ(backoff.next_sleep(), microseconds(40));
  backoff.after_round(true);
  EXPECT_EQ(backoff.next_sleep(), microseconds(10));
}

TEST(IdleBackoff, AnIdleRoundSleeps) {
  IdleBackoff backoff(microseconds(20000), microseconds(20000));
  const auto start = std::chrono::steady_clock::now();
  backoff.after_round(false);
  EXPECT_GE(std::chrono::steady_clock::now() - start, microseconds(20000));
}

}  // namespace
}  // namespace cellgan
