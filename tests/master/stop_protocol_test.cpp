// The stop protocol's decisions, step by step, without ranks or clocks.
#include "master/stop_protocol.h"

#include <gtest/gtest.h>

namespace cellgan {
namespace {

using Kind = StopProtocol::Step::Kind;

TEST(StopProtocol, PausesThenStopsOnePastTheFurthestWorker) {
  StopProtocol stop(3);
  const std::vector<bool> all{true, true, true};
  EXPECT_EQ(stop.advance(all, 0, 20).kind, Kind::kNothing);
  EXPECT_FALSE(stop.active());
  stop.request("signal User defined signal 1");
  const auto pause = stop.advance(all, 0, 20);
  EXPECT_EQ(pause.kind, Kind::kPause);
  EXPECT_EQ(pause.why, "signal User defined signal 1");
  EXPECT_TRUE(stop.active());
  stop.paused(1, 6);
  stop.paused(3, 7);
  EXPECT_EQ(stop.advance(all, 5, 20).kind, Kind::kNothing) << "worker 2 has not answered";
  stop.paused(2, 6);
  const auto at = stop.advance(all, 5, 20);
  EXPECT_EQ(at.kind, Kind::kStopAt);
  EXPECT_EQ(at.generation, 8);  // worker 3 may finish generation 8 before it hears
  EXPECT_EQ(stop.advance(all, 5, 20).kind, Kind::kNothing) << "the checkpoint of 8 is not complete";
  const auto end = stop.advance(all, 8, 20);
  EXPECT_EQ(end.kind, Kind::kStop);
  EXPECT_EQ(end.generation, 8);
}

TEST(StopProtocol, ADeadWorkerIsNotWaitedFor) {
  StopProtocol stop(2);
  stop.request("test");
  stop.advance({true, true}, 0, 20);
  stop.paused(1, 3);
  const auto at = stop.advance({true, false}, 0, 20);
  EXPECT_EQ(at.kind, Kind::kStopAt);
  EXPECT_EQ(at.generation, 4);
}

TEST(StopProtocol, AtTheLastGenerationTheRunFinishesInstead) {
  StopProtocol stop(1);
  stop.request("test");
  stop.advance({true}, 0, 10);
  stop.paused(1, 9);
  const auto at = stop.advance({true}, 5, 10);
  EXPECT_EQ(at.kind, Kind::kFinishInstead);
  EXPECT_EQ(at.generation, 10);
  EXPECT_FALSE(stop.active());
  EXPECT_EQ(stop.advance({true}, 5, 10).kind, Kind::kNothing);
}

TEST(StopProtocol, ASecondRequestDoesNotStartAnotherStop) {
  StopProtocol stop(1);
  stop.request("first");
  stop.advance({true}, 0, 20);
  stop.paused(1, 2);
  stop.advance({true}, 0, 20);  // stopping at 3
  stop.request("second");
  EXPECT_EQ(stop.advance({true}, 0, 20).kind, Kind::kNothing);
  const auto end = stop.advance({true}, 3, 20);
  EXPECT_EQ(end.kind, Kind::kStop);
  EXPECT_EQ(end.generation, 3);
}

}  // namespace
}  // namespace cellgan
