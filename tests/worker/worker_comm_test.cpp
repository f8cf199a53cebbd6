// The worker's communication thread, driven step by step (run_once) over the
// in-process communicators: messages between workers keep their order per
// (source, tag), records and heartbeats reach the master, and every wait
// ends — with the message, or with the interruption as a value: Aborted
// when the master aborts or falls silent, Rehoming when it asks for it.
#include "worker/worker_comm.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>

#include "common/comm/in_process_communicator.h"
#include "common/error.h"

namespace cellgan {
namespace {

using Clock = WorkerComm::Clock;
using std::chrono::milliseconds;

constexpr milliseconds kHeartbeat{50};
constexpr milliseconds kMasterDeadAfter{1000};

// N workers (2 by default) and the master's ends of WORLD and GLOBAL.
struct Workers {
  explicit Workers(int n = 2) : world(n + 1), global(n + 1), local(n) {
    master = world.communicator(0);
    master_global = global.communicator(0);
    for (int w = 0; w < n; ++w) {
      JobComms c{world.communicator(w + 1), global.communicator(w + 1), local.communicator(w)};
      comms.push_back(std::make_unique<WorkerComm>(std::move(c), kHeartbeat, kMasterDeadAfter));
    }
  }
  // The message a wait returned; an empty one (and a test failure) if it
  // returned an interruption.
  static Message message_of(Waited<Message> waited) {
    if (auto* m = std::get_if<Message>(&waited)) return std::move(*m);
    ADD_FAILURE() << "the wait was interrupted";
    return Message{};
  }
  void step(Clock::time_point now, int times = 2) {
    for (int i = 0; i < times; ++i)
      for (auto& c : comms) c->run_once(now);
  }
  InProcessNetwork world, global, local;
  std::unique_ptr<Communicator> master, master_global;
  std::vector<std::unique_ptr<WorkerComm>> comms;
};

TEST(WorkerComm, MessagesBetweenWorkersArriveInOrderPerSourceAndTag) {
  Workers t(3);
  const auto now = Clock::now();
  t.comms[1]->send_local(0, 4, Bytes{1});
  t.comms[1]->send_local(0, 4, Bytes{2});
  t.comms[2]->send_local(0, 4, Bytes{3});
  t.comms[1]->send_local(0, 9, Bytes{4});
  t.step(now);
  EXPECT_EQ(Workers::message_of(t.comms[0]->receive_local(2, 4)).payload, Bytes{3});
  EXPECT_EQ(Workers::message_of(t.comms[0]->receive_local(1, 9)).payload, Bytes{4});
  EXPECT_EQ(Workers::message_of(t.comms[0]->receive_local(1, 4)).payload, Bytes{1});
  EXPECT_EQ(Workers::message_of(t.comms[0]->receive_local(1, 4)).payload, Bytes{2});
  EXPECT_EQ(t.comms[0]->local_rank(), 0);
  EXPECT_EQ(t.comms[2]->local_size(), 3);
}

TEST(WorkerComm, RecordsResultAndHeartbeatsReachTheMaster) {
  Workers t;
  const auto now = Clock::now();
  t.comms[0]->set_progress(WorkerState::kProcessing, 3);
  RecordsMessage r;
  r.generation = 3;
  r.records.resize(1);
  r.records[0].cell = 5;
  r.records[0].generator_loss = 0.125;
  t.comms[0]->report(r);
  t.comms[0]->send_result(Bytes{7, 7});
  t.step(now, 1);
  bool got_records = false, got_heartbeat = false;
  while (auto m = t.master->try_receive()) {
    if (m->tag == kTagRecords && m->source == 1) {
      const RecordsMessage back = decode_records(m->payload);
      ASSERT_EQ(back.records.size(), 1u);
      EXPECT_EQ(back.records[0].cell, 5);
      EXPECT_EQ(back.records[0].generator_loss, 0.125);
      got_records = true;
    }
    if (m->tag == kTagHeartbeat && m->source == 1) {
      const HeartbeatMessage hb = decode_heartbeat(m->payload);
      EXPECT_EQ(hb.state, WorkerState::kProcessing);
      EXPECT_EQ(hb.generation, 3);
      got_heartbeat = true;
    }
  }
  EXPECT_TRUE(got_records);
  EXPECT_TRUE(got_heartbeat);
  const auto result = t.master_global->try_receive(1, kTagResult);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->payload, (Bytes{7, 7}));
  // The next heartbeat waits for the interval, then comes.
  t.step(now + kHeartbeat / 2, 1);
  EXPECT_FALSE(t.master->try_receive(1, kTagHeartbeat).has_value());
  t.step(now + kHeartbeat, 1);
  EXPECT_TRUE(t.master->try_receive(1, kTagHeartbeat).has_value());
}

TEST(WorkerComm, FlushAllReturnsOnceTheSendsToOtherWorkersHaveLeft) {
  // Before a planned kill: a sharded optimizer's moments for a checkpoint,
  // queued for worker 1, must be in its hands; flush_to_master() does not
  // wait for them, flush_all() does.
  Workers t;
  t.comms[1]->send_local(0, kTagGradients, Bytes{4, 2});
  EXPECT_FALSE(t.comms[1]->flush_to_master().has_value());
  std::atomic<bool> flushed{false};
  std::thread training([&] {
    EXPECT_FALSE(t.comms[1]->flush_all().has_value());
    flushed = true;
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(flushed) << "returned with the message to worker 1 still queued";
  while (!flushed) {
    t.step(Clock::now(), 1);
    std::this_thread::sleep_for(milliseconds(1));
  }
  training.join();
  t.step(Clock::now());
  EXPECT_EQ(Workers::message_of(t.comms[0]->receive_local(1, kTagGradients)).payload, (Bytes{4, 2}));
}

TEST(WorkerComm, FlushToMasterReturnsOnceTheQueuedReportsHaveLeft) {
  // Before a planned kill and before the result: the checkpoint report the
  // writer thread queued must be sent, not lost in the queue.
  Workers t;
  t.comms[0]->report_checkpoint(CheckpointMessage{5, {CheckpointFile{2, "cell-0002.bin", 10, 7}}, 0.5, {}});
  std::atomic<bool> flushed{false};
  std::thread training([&] {
    EXPECT_FALSE(t.comms[0]->flush_to_master().has_value());
    flushed = true;
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(flushed) << "returned with the report still queued";
  EXPECT_FALSE(t.master->try_receive(1, kTagCheckpoint).has_value());
  while (!flushed) {
    t.step(Clock::now(), 1);
    std::this_thread::sleep_for(milliseconds(1));
  }
  training.join();
  const auto report = t.master->try_receive(1, kTagCheckpoint);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(decode_checkpoint(report->payload).generation, 5);
}

TEST(WorkerComm, ASilencedWorkerSendsTheMasterNothingButGoesOnWithTheOthers) {
  Workers t;
  const auto now = Clock::now();
  t.comms[0]->go_silent();
  t.comms[0]->report(RecordsMessage{});
  t.comms[0]->send_result(Bytes{1});
  t.comms[0]->send_local(1, 4, Bytes{5});
  t.step(now + kHeartbeat * 3, 1);
  EXPECT_FALSE(t.master->try_receive(1).has_value());
  EXPECT_FALSE(t.master_global->try_receive(1).has_value());
  EXPECT_TRUE(t.master->try_receive(2, kTagHeartbeat).has_value());
  EXPECT_EQ(Workers::message_of(t.comms[1]->receive_local(0, 4)).payload, Bytes{5});
}

TEST(WorkerComm, AFailureIsReportedToTheMaster) {
  Workers t;
  t.comms[1]->send_failure("cell 3: out of memory");
  t.step(Clock::now(), 1);
  const auto failure = t.master->try_receive(2, kTagFailure);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(decode_failure(failure->payload).reason, "cell 3: out of memory");
  const auto hb = t.master->try_receive(2, kTagHeartbeat);
  ASSERT_TRUE(hb.has_value());
  EXPECT_EQ(decode_heartbeat(hb->payload).state, WorkerState::kFailed);
}

TEST(WorkerComm, TheMastersAbortEndsAWaitWithItsExitCode) {
  Workers t;
  const auto now = Clock::now();
  t.master->send(1, kTagAbort, encode(AbortMessage{kExitBadInput, "worker rank 2 failed"}));
  std::thread waiter([&] {
    Waited<Message> waited = t.comms[0]->receive_local(1, 4);
    ASSERT_TRUE(std::holds_alternative<Interruption>(waited)) << "receive_local returned without a message";
    const auto* abort = std::get_if<Aborted>(&std::get<Interruption>(waited));
    ASSERT_NE(abort, nullptr) << "a rehoming, not the abort";
    EXPECT_EQ(abort->exit_code, kExitBadInput);
    EXPECT_EQ(abort->reason, "worker rank 2 failed");
  });
  t.step(now, 1);
  waiter.join();
  EXPECT_FALSE(t.comms[0]->master_lost());
  ASSERT_TRUE(t.comms[0]->aborted().has_value());
  EXPECT_FALSE(t.comms[1]->aborted().has_value());
}

TEST(WorkerComm, ASilentMasterIsPresumedDeadAfterTheDeadline) {
  Workers t;
  const auto start = Clock::now();
  // The master's heartbeats keep it alive...
  t.master->send(1, kTagMasterHeartbeat, Bytes{});
  t.step(start + kMasterDeadAfter / 2, 1);
  t.step(start + kMasterDeadAfter + kMasterDeadAfter / 4, 1);
  EXPECT_FALSE(t.comms[0]->aborted().has_value()) << "heard from the master half a deadline ago";
  EXPECT_TRUE(t.comms[1]->aborted().has_value()) << "never heard from the master";
  // ...and a wait ends once the master has been silent for the deadline.
  t.step(start + 2 * kMasterDeadAfter, 1);
  const auto abort = t.comms[0]->aborted();
  ASSERT_TRUE(abort.has_value());
  EXPECT_EQ(abort->exit_code, kExitFailure);
  EXPECT_NE(abort->reason.find("master is presumed dead: silent for"), std::string::npos) << abort->reason;
  EXPECT_TRUE(t.comms[0]->master_lost());
  Waited<Message> waited = t.comms[0]->receive_local(1, 4);
  ASSERT_TRUE(std::holds_alternative<Interruption>(waited));
  EXPECT_TRUE(std::holds_alternative<Aborted>(std::get<Interruption>(waited)));
}

TEST(WorkerComm, ARehomingEndsAWaitOnceWithTheSurvivors) {
  Workers t(3);
  const auto now = Clock::now();
  t.master->send(1, kTagRehome, encode(MembersMessage{{1, 3}, 4, "run/checkpoints/gen-0004", 77}));
  t.step(now, 1);
  Waited<Message> waited = t.comms[0]->receive_local(1, 4);
  ASSERT_TRUE(std::holds_alternative<Interruption>(waited));
  const auto* rehoming = std::get_if<Rehoming>(&std::get<Interruption>(waited));
  ASSERT_NE(rehoming, nullptr) << "an abort, not the rehoming";
  EXPECT_EQ(rehoming->members.members, (std::vector<std::int32_t>{1, 3}));
  EXPECT_EQ(rehoming->members.generation, 4);
  EXPECT_EQ(rehoming->members.folder, "run/checkpoints/gen-0004");
  EXPECT_EQ(rehoming->members.local_tag, 77);
  // Taken by the wait that returned it: the next wait gets its message.
  EXPECT_FALSE(t.comms[0]->interrupted().has_value());
  t.comms[2]->send_local(0, 4, Bytes{6});
  t.step(now);
  EXPECT_EQ(Workers::message_of(t.comms[0]->receive_local(2, 4)).payload, Bytes{6});
  EXPECT_FALSE(t.comms[1]->interrupted().has_value()) << "the rehoming was for worker rank 1 only";
}

}  // namespace
}  // namespace cellgan

namespace cellgan {
namespace {

TEST(WorkerComm, WaitsForDoneUntilTheMasterSaysSo) {
  Workers t;
  const auto now = Clock::now();
  t.master->send(1, kTagDone, Bytes{});
  std::thread waiter([&] { EXPECT_FALSE(t.comms[0]->wait_for_done().has_value()); });
  t.step(now, 1);
  waiter.join();
  // Done is not an abort, and the master is not presumed dead after it.
  t.step(now + 2 * kMasterDeadAfter, 1);
  EXPECT_FALSE(t.comms[0]->aborted().has_value());
  EXPECT_FALSE(t.comms[0]->master_lost());
}

TEST(WorkerComm, ALayoutSendingToNoOtherWorkerIsABug) {
  Workers t(2);
  EXPECT_THROW(t.comms[0]->send_local(0, 4, Bytes{}), std::logic_error);
  EXPECT_THROW(t.comms[0]->send_local(2, 4, Bytes{}), std::logic_error);
  EXPECT_THROW(t.comms[0]->send_local(-1, 4, Bytes{}), std::logic_error);
}

TEST(WorkerComm, AnErrorOnTheCommunicationThreadEndsTheWaitsAndTellsTheMaster) {
  Workers t;
  // A malformed abort from rank 0: decoding it throws on the communication thread.
  t.master->send(1, kTagAbort, Bytes{1});
  std::thread comm([&] { t.comms[0]->run(); });
  Waited<Message> waited = t.comms[0]->receive_local(1, 4);
  comm.join();
  ASSERT_TRUE(std::holds_alternative<Interruption>(waited)) << "receive_local returned without a message";
  const auto* abort = std::get_if<Aborted>(&std::get<Interruption>(waited));
  ASSERT_NE(abort, nullptr);
  EXPECT_EQ(abort->exit_code, kExitFailure);
  EXPECT_NE(abort->reason.find("communication thread: abort message: truncated"), std::string::npos) << abort->reason;
  const auto failure = t.master->try_receive(1, kTagFailure);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(decode_failure(failure->payload).reason.find("communication thread"), std::string::npos);
}

}  // namespace
}  // namespace cellgan

namespace cellgan {
namespace {

// Heartbeats from worker rank `w` that reached the master so far.
int heartbeats_from(Communicator& master, int w) {
  int n = 0;
  while (auto m = master.try_receive(w, kTagHeartbeat)) ++n;
  return n;
}

TEST(WorkerComm, AnAllreduceWaitingForAnotherWorkerLeavesTheThreadBeatingThenSums) {
  Workers t;
  std::vector<float> first{1.0f, 2.0f, 3.0f};
  std::atomic<int> returned{0};
  std::thread waiting([&] {
    EXPECT_FALSE(t.comms[0]->allreduce_local(first).has_value());
    ++returned;
  });
  auto now = Clock::now();
  for (int i = 0; i < 5; ++i) {  // worker 2 has not joined: worker 1 keeps beating
    now += kHeartbeat;
    t.step(now, 1);
  }
  EXPECT_GE(heartbeats_from(*t.master, 1), 4);
  std::vector<float> second{10.0f, 20.0f, 30.0f};
  EXPECT_EQ(returned, 0);
  std::thread joining([&] {
    EXPECT_FALSE(t.comms[1]->allreduce_local(second).has_value());
    ++returned;
  });
  for (int i = 0; i < 2000 && returned < 2; ++i) {
    t.step(now, 1);
    std::this_thread::sleep_for(milliseconds(1));
  }
  waiting.join();
  joining.join();
  EXPECT_EQ(first, (std::vector<float>{11.0f, 22.0f, 33.0f}));
  EXPECT_EQ(second, first);
}

// Worker 1 waits in `sum`, which cannot complete; the master's abort,
// sent after one step of the communication threads, must end the wait with
// the abort's code.
void expect_an_abort_ends(Workers& t, const std::function<std::optional<Interruption>()>& sum) {
  std::atomic<int> code{-1};
  std::thread waiting([&] {
    const std::optional<Interruption> interruption = sum();
    if (const auto* abort = interruption ? std::get_if<Aborted>(&*interruption) : nullptr) code = abort->exit_code;
  });
  const auto now = Clock::now();
  t.step(now, 1);
  t.master->send(1, kTagAbort, encode(AbortMessage{kExitFailure, "test abort"}));
  for (int i = 0; i < 2000 && code < 0; ++i) {
    t.step(now, 1);
    std::this_thread::sleep_for(milliseconds(1));
  }
  waiting.join();
  EXPECT_EQ(code, kExitFailure);
}

TEST(WorkerComm, AnAbortEndsAnAllreduceThatCannotComplete) {
  Workers t;
  std::vector<float> values{1.0f};
  expect_an_abort_ends(t, [&] { return t.comms[0]->allreduce_local(values); });  // worker 2 never joins
}

// Workers 1 and 3 of three sum among themselves, twice (the second on the
// subgroup kept from the first); worker 2 takes no part.
TEST(WorkerComm, AnAllreduceAmongSomeWorkersSumsOverThemAlone) {
  Workers t(3);
  std::vector<std::vector<float>> got(3);
  std::atomic<int> returned{0};
  std::vector<std::thread> threads;
  for (int w : {0, 2})
    threads.emplace_back([&, w] {
      std::vector<float> values{static_cast<float>(w + 1), 1.0f};
      EXPECT_FALSE(t.comms[w]->allreduce_among({0, 2}, values).has_value());
      EXPECT_FALSE(t.comms[w]->allreduce_among({0, 2}, values).has_value());
      got[static_cast<std::size_t>(w)] = values;
      ++returned;
    });
  const auto now = Clock::now();
  for (int i = 0; i < 4000 && returned < 2; ++i) {
    t.step(now, 1);
    std::this_thread::sleep_for(milliseconds(1));
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(got[0], (std::vector<float>{8.0f, 4.0f}));
  EXPECT_EQ(got[2], got[0]);
  std::vector<float> outsider{1.0f};
  EXPECT_THROW(static_cast<void>(t.comms[1]->allreduce_among({0, 2}, outsider)), std::logic_error);
}

// A member that never comes: the master's abort ends the wait of the one
// that came (before the subgroup is made, and so before any sum).
TEST(WorkerComm, AnAbortEndsAnAllreduceAmongWorkersWhenOneNeverComes) {
  Workers t(3);
  std::vector<float> values{1.0f};
  expect_an_abort_ends(t, [&] { return t.comms[0]->allreduce_among({0, 1}, values); });
}

}  // namespace
}  // namespace cellgan
