// Tests of master/startup_handshake.h over the in-process communicators:
// the test plays the workers.
#include "master/startup_handshake.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <thread>

#include "common/comm/in_process_job.h"
#include "common/error.h"

namespace cellgan {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// The master's world and those of `workers` workers the test plays.
struct Job {
  explicit Job(int workers) : job(workers + 1) {
    for (int r = 0; r <= workers; ++r) {
      factories.push_back(job.factory(r));
      worlds.push_back(factories.back()->world());
    }
    handshake = std::make_unique<StartupHandshake>(*worlds[0], workers, 0);
  }
  Communicator& worker(int w) { return *worlds[static_cast<std::size_t>(w)]; }
  int received(int w, int tag) {
    int n = 0;
    while (worker(w).try_receive(0, tag)) ++n;
    return n;
  }

  InProcessJob job;
  std::vector<std::unique_ptr<JobCommsFactory>> factories;
  std::vector<std::unique_ptr<Communicator>> worlds;
  std::unique_ptr<StartupHandshake> handshake;
};

StartMessage start_of(Communicator& world) {
  return decode_start(receive_blocking(world, 0, kTagStart, milliseconds(5000)).value().payload);
}

TEST(StartupHandshake, BeatsToEveryWorkerWhileItChecksThenTellsThemTheStartMessage) {
  Job t(2);
  t.handshake->check_and_tell([] {
    std::this_thread::sleep_for(milliseconds(50));
    return StartMessage{true, 0, "", "seed: 7\n", "run.yaml", 4, "/run/checkpoints/gen-000004"};
  });
  for (int w : {1, 2}) {
    EXPECT_GE(t.received(w, kTagMasterHeartbeat), 1) << "worker " << w << " was not beaten to";
    const StartMessage start = start_of(t.worker(w));
    EXPECT_TRUE(start.ok);
    EXPECT_EQ(start.config_yaml, "seed: 7\n");
    EXPECT_EQ(start.resume_generation, 4);
    EXPECT_EQ(start.resume_folder, "/run/checkpoints/gen-000004");
  }
}

TEST(StartupHandshake, RefusesEveryWorkerWithTheExitCodeOfWhatTheCheckThrew) {
  Job t(2);
  EXPECT_THROW(t.handshake->check_and_tell([]() -> StartMessage { throw InputError("run.yaml: seed: expected 7"); }),
               InputError);
  for (int w : {1, 2}) {
    const StartMessage start = start_of(t.worker(w));
    EXPECT_FALSE(start.ok);
    EXPECT_EQ(start.exit_code, kExitBadInput);
    EXPECT_EQ(start.error, "run.yaml: seed: expected 7");
  }
}

TEST(StartupHandshake, WaitsForEveryWorkerAndPassesTheirIdentitiesOn) {
  Job t(2);
  t.worker(2).send(0, kTagIdentity, encode(IdentityMessage{4242, "node-2"}));
  t.worker(2).send(0, kTagHeartbeat, encode(HeartbeatMessage{WorkerState::kProcessing, 0}));
  t.worker(2).send(0, kTagReady, Bytes{});
  std::thread late([&] {
    std::this_thread::sleep_for(milliseconds(100));
    t.worker(1).send(0, kTagReady, Bytes{});
  });
  std::vector<std::pair<int, std::int64_t>> identities;
  const auto r = t.handshake->wait_until_ready(
      milliseconds(10000), milliseconds(20), [&](int w, const IdentityMessage& id) { identities.emplace_back(w, id.pid); });
  late.join();
  EXPECT_EQ(r.ready, (std::vector<int>{1, 2}));
  EXPECT_TRUE(r.silent.empty());
  EXPECT_FALSE(r.failure);
  EXPECT_EQ(identities, (std::vector<std::pair<int, std::int64_t>>{{2, 4242}}));
  EXPECT_GE(t.received(2, kTagMasterHeartbeat), 1) << "the ready worker waits for go with a deadline";
}

TEST(StartupHandshake, NamesTheWorkersStillSilentAtTheDeadlineAndBeatsOnlyToTheReady) {
  Job t(2);
  t.worker(1).send(0, kTagReady, Bytes{});
  const auto began = Clock::now();
  const auto r = t.handshake->wait_until_ready(milliseconds(300), milliseconds(50), [](int, const IdentityMessage&) {});
  EXPECT_GE(Clock::now() - began, milliseconds(300));
  EXPECT_EQ(r.ready, (std::vector<int>{1}));
  EXPECT_EQ(r.silent, (std::vector<int>{2}));
  EXPECT_GE(t.received(1, kTagMasterHeartbeat), 2);
  EXPECT_EQ(t.received(2, kTagMasterHeartbeat), 0);
}

TEST(StartupHandshake, AWorkersFailureEndsTheWaitAtOnce) {
  Job t(2);
  t.worker(2).send(0, kTagFailure, encode(FailureMessage{"no data at /d", kExitBadInput}));
  const auto began = Clock::now();
  const auto r =
      t.handshake->wait_until_ready(milliseconds(20000), milliseconds(50), [](int, const IdentityMessage&) {});
  EXPECT_LT(Clock::now() - began, milliseconds(10000));
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->first, 2);
  EXPECT_EQ(r.failure->second.reason, "no data at /d");
  EXPECT_EQ(r.failure->second.exit_code, kExitBadInput);
  EXPECT_TRUE(r.silent.empty()) << "no worker is called silent before the deadline";
}

TEST(StartupHandshake, AnyOtherMessageBeforeReadyIsABug) {
  Job t(1);
  t.worker(1).send(0, kTagRecords, Bytes{});
  EXPECT_THROW(t.handshake->wait_until_ready(milliseconds(5000), milliseconds(50), [](int, const IdentityMessage&) {}),
               std::logic_error);
}

// A slow preparation (the run folder on a slow disk) is beaten through to
// the members, then go reaches them only; one that throws sends no go.
TEST(StartupHandshake, PreparationIsBeatenThroughAndGoReachesTheMembersOnly) {
  Job t(2);
  t.handshake->prepare_and_go([] { std::this_thread::sleep_for(milliseconds(300)); }, milliseconds(50), {2});
  const MembersMessage go =
      decode_members(receive_blocking(t.worker(2), 0, kTagGo, milliseconds(5000)).value().payload, "go");
  EXPECT_EQ(go.members, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(go.generation, 0);
  EXPECT_EQ(go.local_tag, kLocalGroupTag);
  EXPECT_GE(t.received(2, kTagMasterHeartbeat), 2) << "the member waiting for go heard no beat";
  EXPECT_EQ(t.received(1, kTagMasterHeartbeat), 0) << "a worker left out was beaten to";
  EXPECT_FALSE(t.worker(1).try_receive(0, kTagGo));

  Job failing(1);
  EXPECT_THROW(failing.handshake->prepare_and_go([] { throw InputError("runs/x: locked"); }, milliseconds(50), {1}),
               InputError);
  EXPECT_FALSE(failing.worker(1).try_receive(0, kTagGo));
}

}  // namespace
}  // namespace cellgan
