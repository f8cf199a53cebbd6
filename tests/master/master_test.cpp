// The master's control loop driven step by step with a clock of the test's
// own (Master::run_once(now)): the test plays the one worker over the
// in-process communicators, so every deadline is exact.
#include "master/master.h"

#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "common/comm/in_process_job.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using std::chrono::milliseconds;
using test::read_bytes;
using test::TempDir;
using test::write_bytes;
using Clock = Master::Clock;

constexpr milliseconds kInterval{100}, kLate{1000}, kDead{3000};

// A master and the test's stand-in for its one worker, past start-up.
struct OneWorker {
  explicit OneWorker(const TempDir& tmp) : job(2), master_factory(job.factory(0)), worker_factory(job.factory(1)) {
    std::string text = read_bytes(std::string(CELLGAN_SOURCE_DIR) + "/tests/mpi/toy-2x2.yaml");
    text = std::regex_replace(text, std::regex("output_dir: .*"), "output_dir: " + tmp.file("run"));
    text = std::regex_replace(text, std::regex("runtime: .*"),
                              "runtime: {heartbeat_interval_ms: 100, late_after_ms: 1000, dead_after_ms: 3000}");
    write_bytes(tmp.file("run.yaml"), text);
    master = std::make_unique<Master>(*master_factory, tmp.file("run.yaml"));
    // The worker's side of start-up: the start message, ready, go, GLOBAL, hello.
    std::thread worker([this] {
      world = worker_factory->world();
      start = decode_start(receive_blocking(*world, 0, kTagStart, milliseconds(10000)).value().payload);
      world->send(0, kTagReady, Bytes{});
      receive_blocking(*world, 0, kTagGo, milliseconds(10000)).value();
      global = worker_factory->group({0, 1}, kGlobalGroupTag);
      global->send(0, kTagHello, encode(HelloMessage{"OpenBLAS Test", "cpu"}));
    });
    master->start(t0);
    worker.join();
  }
  void beat(std::int64_t generation) {
    world->send(0, kTagHeartbeat, encode(HeartbeatMessage{WorkerState::kProcessing, generation}));
  }
  int received(int tag) {
    int n = 0;
    while (world->try_receive(0, tag)) ++n;
    return n;
  }

  InProcessJob job;
  std::unique_ptr<JobCommsFactory> master_factory, worker_factory;
  std::unique_ptr<Master> master;
  std::unique_ptr<Communicator> world, global;
  StartMessage start;
  const Clock::time_point t0 = Clock::now();
};

TEST(Master, DeclaresASilentWorkerDeadExactlyAtTheDeadlineAndSendsItNothing) {
  TempDir tmp;
  OneWorker t(tmp);
  ASSERT_TRUE(t.start.ok);
  t.beat(0);
  const auto last_beat = t.t0 + milliseconds(100);
  EXPECT_TRUE(t.master->run_once(last_beat));
  EXPECT_TRUE(t.master->run_once(last_beat + kLate));
  EXPECT_TRUE(t.master->run_once(last_beat + kDead - milliseconds(1)));
  EXPECT_FALSE(t.master->worker_lost());
  EXPECT_GT(t.received(kTagMasterHeartbeat), 0);
  try {
    t.master->run_once(last_beat + kDead);
    FAIL() << "the worker was not declared dead at the deadline";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "worker rank 1 is lost (silent for 3.0 s (runtime.dead_after_ms 3000)) and no worker is left");
  }
  EXPECT_TRUE(t.master->worker_lost());
  EXPECT_EQ(t.received(kTagAbort), 0) << "nothing is sent to a dead worker";
  const std::string events = read_bytes(tmp.file("run/events.log"));
  EXPECT_NE(events.find("worker rank 1 late: silent for 1.0 s"), std::string::npos) << events;
  EXPECT_NE(events.find("worker rank 1 dead: silent for 3.0 s"), std::string::npos) << events;
}

TEST(Master, ASlowWorkerThatBeatsIsNeverDeclaredDead) {
  TempDir tmp;
  OneWorker t(tmp);
  // Beats just under the deadline apart, for a minute of the fake clock;
  // the master looks in between too, and finds it late each time.
  for (auto now = t.t0; now < t.t0 + std::chrono::seconds(60); now += kDead - milliseconds(1)) {
    t.beat(0);
    EXPECT_TRUE(t.master->run_once(now));
    EXPECT_TRUE(t.master->run_once(now + kDead - milliseconds(2)));
  }
  EXPECT_FALSE(t.master->worker_lost());
  const std::string events = read_bytes(tmp.file("run/events.log"));
  EXPECT_NE(events.find("worker rank 1 late"), std::string::npos) << events;
  EXPECT_NE(events.find("worker rank 1 recovered"), std::string::npos) << events;
  EXPECT_EQ(events.find("dead"), std::string::npos) << events;
}

// The records of a whole generation of the toy 2x2 grid.
Bytes all_cells(std::int64_t generation) {
  RecordsMessage m;
  m.generation = generation;
  for (int cell = 0; cell < 4; ++cell) {
    GenerationRecord r;
    r.cell = cell;
    r.generation = generation;
    r.scores["mode_tvd"] = 0.5;
    m.records.push_back(r);
  }
  return encode(m);
}

TEST(Master, AWorkerStoppedDuringTheFinalGatherIsDeclaredDeadAtTheDeadline) {
  TempDir tmp;
  OneWorker t(tmp);
  // Every generation arrives; then the worker stops before its result.
  for (std::int64_t g = 1; g <= 4; ++g) t.world->send(0, kTagRecords, all_cells(g));
  const auto last = t.t0 + milliseconds(50);
  EXPECT_TRUE(t.master->run_once(last));
  EXPECT_TRUE(t.master->run_once(last + kDead - milliseconds(1)));
  EXPECT_FALSE(t.master->worker_lost());
  try {
    t.master->run_once(last + kDead);
    FAIL() << "a worker stopped in the final gather was not declared dead";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("worker rank 1 is lost (silent for 3.0 s"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(t.master->worker_lost());
  EXPECT_NE(read_bytes(tmp.file("run/events.log")).find("worker rank 1 dead: silent for 3.0 s"), std::string::npos);
}

TEST(Master, AWorkerWaitingForTheEndIsNeverDeclaredDeadWhileItBeats) {
  TempDir tmp;
  OneWorker t(tmp);
  for (std::int64_t g = 1; g <= 4; ++g) t.world->send(0, kTagRecords, all_cells(g));
  // Done with its generations, it waits (say, for a slow scoring) beating
  // as finished, for two minutes of the fake clock.
  for (auto now = t.t0; now < t.t0 + std::chrono::seconds(120); now += kInterval) {
    t.world->send(0, kTagHeartbeat, encode(HeartbeatMessage{WorkerState::kFinished, 4}));
    EXPECT_TRUE(t.master->run_once(now));  // its result is not in: the run goes on
  }
  EXPECT_FALSE(t.master->worker_lost());
  const std::string events = read_bytes(tmp.file("run/events.log"));
  EXPECT_EQ(events.find("late"), std::string::npos) << events;
  EXPECT_EQ(events.find("dead"), std::string::npos) << events;
}

TEST(Master, BeatsToItsWorkersOncePerInterval) {
  TempDir tmp;
  OneWorker t(tmp);
  t.received(kTagMasterHeartbeat);
  int sent = 0;
  for (int ms = 0; ms < 1000; ms += 10) {
    t.beat(0);
    t.master->run_once(t.t0 + milliseconds(1000 + ms));
    sent += t.received(kTagMasterHeartbeat);
  }
  EXPECT_EQ(sent, 10);  // one per 100 ms over one second
}

TEST(Master, AWorkersFailureEndsTheRunWithItsReason) {
  TempDir tmp;
  OneWorker t(tmp);
  t.world->send(0, kTagFailure, encode(FailureMessage{"generation 2: out of memory"}));
  try {
    t.master->run_once(t.t0 + milliseconds(10));
    FAIL() << "a failed worker did not end the run";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker rank 1 failed: generation 2: out of memory");
  }
  EXPECT_FALSE(t.master->worker_lost());
  EXPECT_NE(read_bytes(tmp.file("run/events.log")).find("worker rank 1 failed: generation 2: out of memory"),
            std::string::npos);
}

// A full disk on a worker ends the run with kExitDiskFull, which the
// launcher does not restart: said once, by the exception's one line.
TEST(Master, AWorkersFullDiskEndsTheRunAsSuch) {
  TempDir tmp;
  OneWorker t(tmp);
  t.world->send(0, kTagFailure,
                encode(FailureMessage{"generation 5: /r/cell-0000.bin: no space left on the device", kExitDiskFull}));
  try {
    t.master->run_once(t.t0 + milliseconds(10));
    FAIL() << "a worker's full disk did not end the run";
  } catch (const std::exception& e) {
    EXPECT_EQ(exit_code_of(e), kExitDiskFull) << e.what();
    EXPECT_STREQ(e.what(), "worker rank 1: generation 5: /r/cell-0000.bin: no space left on the device");
  }
  EXPECT_NE(read_bytes(tmp.file("run/events.log")).find("worker rank 1 failed: generation 5: /r/cell-0000.bin"),
            std::string::npos);
}

}  // namespace
}  // namespace cellgan
