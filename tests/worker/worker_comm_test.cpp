// The worker's communication thread, driven step by step (run_once) over the
// in-process communicator: halos reach the neighbour worker and are matched
// by generation, records and heartbeats reach the master.
#include "worker/worker_comm.h"

#include <gtest/gtest.h>

#include "common/comm/in_process_communicator.h"
#include "grid/topology.h"

namespace cellgan {
namespace {

// A 1xN grid on N workers (2 by default): each worker owns one cell and
// needs the others (N <= 3, von Neumann).
struct RowOfWorkers {
  explicit RowOfWorkers(int n = 2)
      : world(n + 1), global(n + 1), local(n), grid(1, n), partition(partition_cells(grid, n)) {
    master = world.communicator(0);
    for (int w = 0; w < n; ++w) {
      comms.push_back(std::make_unique<WorkerComm>(world.communicator(w + 1), global.communicator(w + 1),
                                                   local.communicator(w),
                                                   halo_plan(grid, partition, NeighbourhoodKind::kVonNeumann, w),
                                                   std::chrono::milliseconds(50)));
    }
  }
  void step(int times = 2) {
    for (int i = 0; i < times; ++i)
      for (auto& c : comms) c->run_once();
  }
  InProcessNetwork world, global, local;
  GridShape grid;
  Partition partition;
  std::unique_ptr<Communicator> master;
  std::vector<std::unique_ptr<WorkerComm>> comms;
};

std::map<int, std::pair<Bytes, Bytes>> centre(int cell, std::uint8_t tag) {
  return {{cell, {Bytes{tag, 1}, Bytes{tag, 2}}}};
}

TEST(WorkerComm, HalosReachTheNeighbourWorker) {
  RowOfWorkers t;
  t.comms[0]->publish_centres(0, centre(0, 10));
  t.comms[1]->publish_centres(0, centre(1, 11));
  t.step();
  const auto at0 = t.comms[0]->wait_for_halos(0);
  const auto at1 = t.comms[1]->wait_for_halos(0);
  ASSERT_EQ(at0.size(), 1u);
  ASSERT_EQ(at1.size(), 1u);
  EXPECT_EQ(at0.at(1).generator, (Bytes{11, 1}));
  EXPECT_EQ(at0.at(1).discriminator, (Bytes{11, 2}));
  EXPECT_EQ(at1.at(0).generator, (Bytes{10, 1}));
  EXPECT_EQ(at1.at(0).generation, 0);
}

TEST(WorkerComm, ACentreNeededByTwoWorkersReachesBoth) {
  RowOfWorkers t(3);  // on a 1x3 ring every cell is both others' neighbour
  for (int w = 0; w < 3; ++w) t.comms[w]->publish_centres(0, centre(w, static_cast<std::uint8_t>(40 + w)));
  t.step();
  for (int w = 0; w < 3; ++w) {
    const auto halos = t.comms[w]->wait_for_halos(0);
    ASSERT_EQ(halos.size(), 2u) << "worker " << w;
    for (const auto& [cell, halo] : halos) {
      EXPECT_NE(cell, w);
      EXPECT_EQ(halo.generator, (Bytes{static_cast<std::uint8_t>(40 + cell), 1})) << "worker " << w;
      EXPECT_EQ(halo.discriminator, (Bytes{static_cast<std::uint8_t>(40 + cell), 2})) << "worker " << w;
    }
  }
}

TEST(WorkerComm, EarlyHalosOfALaterGenerationWaitTheirTurn) {
  RowOfWorkers t;
  // Worker 1 runs ahead: it publishes generations 0 and 1 before worker 0 asks.
  t.comms[1]->publish_centres(0, centre(1, 20));
  t.comms[1]->publish_centres(1, centre(1, 21));
  t.comms[0]->publish_centres(0, centre(0, 30));
  t.step();
  EXPECT_EQ(t.comms[0]->wait_for_halos(0).at(1).generator, (Bytes{20, 1}));
  EXPECT_EQ(t.comms[0]->wait_for_halos(1).at(1).generator, (Bytes{21, 1}));
}

TEST(WorkerComm, RecordsAndHeartbeatsReachTheMaster) {
  RowOfWorkers t;
  t.comms[0]->set_progress(WorkerState::kProcessing, 3);
  RecordsMessage r;
  r.generation = 3;
  r.cells = 1;
  r.json_lines = "{\"cell\":0}\n";
  t.comms[0]->report(r);
  t.step(1);
  bool got_records = false, got_heartbeat = false;
  while (auto m = t.master->try_receive()) {
    if (m->tag == kTagRecords && m->source == 1) {
      EXPECT_EQ(decode_records(m->payload).json_lines, r.json_lines);
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
  // The next heartbeat waits for the interval.
  t.step(1);
  EXPECT_FALSE(t.master->try_receive(1, kTagHeartbeat).has_value());
}

}  // namespace
}  // namespace cellgan
