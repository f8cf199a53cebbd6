// Unit tests of InProcessNetwork and the blocking helpers of communicator.h:
// ranks are threads of this process.
//
// Thread-safety: each test spawns one thread per rank; every thread uses
// only its own communicator. EXPECT_* is safe from any thread.
#include "common/comm/in_process_communicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace cellgan {
namespace {

constexpr std::chrono::milliseconds kTestTimeout{10000};  // far beyond any healthy wait here

// Runs `body` once per rank, each on its own thread, and joins them all.
void run_ranks(int n, const std::function<void(Communicator&)>& body) {
  InProcessNetwork network(n);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < n; ++r) comms.push_back(network.communicator(r));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { body(*comms[r]); });
  for (auto& t : threads) t.join();
}

Bytes encode(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) {
    for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
  }
  return out;
}

int decode(const Bytes& bytes, std::size_t index) {
  int v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<int>(bytes.at(index * 4 + i)) << (8 * i);
  return v;
}

TEST(InProcessCommunicatorTest, RankAndSize) {
  InProcessNetwork network(3);
  EXPECT_EQ(network.size(), 3);
  auto c2 = network.communicator(2);
  EXPECT_EQ(c2->rank(), 2);
  EXPECT_EQ(c2->size(), 3);
  EXPECT_THROW(network.communicator(2), std::logic_error);
  EXPECT_THROW(network.communicator(3), std::invalid_argument);
  EXPECT_THROW(InProcessNetwork(0), std::invalid_argument);
  EXPECT_THROW(c2->send(3, 0, {}), std::invalid_argument);
}

TEST(InProcessCommunicatorTest, TryReceiveReturnsNothingWhenEmptyOrUnmatched) {
  InProcessNetwork network(2);
  auto c0 = network.communicator(0);
  auto c1 = network.communicator(1);
  EXPECT_FALSE(c1->try_receive().has_value());
  c0->send(1, 5, {42});
  EXPECT_FALSE(c1->try_receive(kAnySource, 6).has_value());
  EXPECT_FALSE(c1->try_receive(1, 5).has_value());
  EXPECT_FALSE(c0->try_receive().has_value());
  auto m = c1->try_receive(0, 5);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->payload, Bytes{42});
  EXPECT_FALSE(c1->try_receive().has_value());
  EXPECT_EQ(c0->pending_sends(), 0u);
}

// Every rank sends 200 messages to every other rank, alternating tags 1 and
// 2; every receiver must see each (source, tag) stream in send order.
TEST(InProcessCommunicatorTest, OrderIsKeptPerPairAndTag) {
  constexpr int kRanks = 4;
  constexpr int kMessages = 200;
  run_ranks(kRanks, [&](Communicator& comm) {
    for (int i = 0; i < kMessages; ++i) {
      for (int dest = 0; dest < kRanks; ++dest) {
        if (dest != comm.rank()) comm.send(dest, 1 + i % 2, encode({comm.rank(), i}));
      }
    }
    std::map<std::pair<int, int>, int> last;  // (source, tag) -> last sequence
    for (int received = 0; received < (kRanks - 1) * kMessages; ++received) {
      const Message m = receive_blocking(comm, kAnySource, kAnyTag, kTestTimeout).value();
      EXPECT_EQ(decode(m.payload, 0), m.source);
      const int seq = decode(m.payload, 1);
      EXPECT_EQ(1 + seq % 2, m.tag);
      auto [it, fresh] = last.emplace(std::make_pair(m.source, m.tag), seq);
      if (!fresh) {
        EXPECT_GT(seq, it->second) << "source " << m.source << " tag " << m.tag;
        it->second = seq;
      }
    }
    EXPECT_FALSE(comm.try_receive().has_value());
  });
}

// A receive for one (source, tag) skips earlier messages of other streams
// and leaves them, in order, for later receives.
TEST(InProcessCommunicatorTest, SelectiveReceiveKeepsOtherStreams) {
  InProcessNetwork network(3);
  auto c0 = network.communicator(0);
  auto c1 = network.communicator(1);
  auto c2 = network.communicator(2);
  c1->send(0, 7, encode({10}));
  c2->send(0, 7, encode({20}));
  c1->send(0, 8, encode({11}));
  c1->send(0, 7, encode({12}));
  EXPECT_EQ(decode(receive_blocking(*c0, 1, 8, kTestTimeout).value().payload, 0), 11);
  EXPECT_EQ(decode(receive_blocking(*c0, 2, kAnyTag, kTestTimeout).value().payload, 0), 20);
  EXPECT_EQ(decode(receive_blocking(*c0, 1, 7, kTestTimeout).value().payload, 0), 10);
  EXPECT_EQ(decode(receive_blocking(*c0, kAnySource, 7, kTestTimeout).value().payload, 0), 12);
  EXPECT_FALSE(c0->try_receive().has_value());
}

TEST(InProcessCommunicatorTest, AnySourceAnyTagReceivesFromEveryone) {
  constexpr int kRanks = 4;
  run_ranks(kRanks, [&](Communicator& comm) {
    if (comm.rank() != 0) {
      comm.send(0, 100 + comm.rank(), encode({comm.rank() * 3}));
      flush_sends(comm, kTestTimeout);
      return;
    }
    std::vector<bool> seen(kRanks, false);
    for (int i = 1; i < kRanks; ++i) {
      const Message m = receive_blocking(comm, kAnySource, kAnyTag, kTestTimeout).value();
      ASSERT_GE(m.source, 1);
      ASSERT_LT(m.source, kRanks);
      EXPECT_FALSE(seen[m.source]);
      seen[m.source] = true;
      EXPECT_EQ(m.tag, 100 + m.source);
      EXPECT_EQ(decode(m.payload, 0), m.source * 3);
    }
  });
}

TEST(InProcessCommunicatorTest, ReceiveBlockingWaitsForALateSend) {
  run_ranks(2, [](Communicator& comm) {
    if (comm.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      comm.send(0, 3, {1, 2, 3});
    } else {
      const Message m = receive_blocking(comm, 1, 3, kTestTimeout).value();
      EXPECT_EQ(m.payload, (Bytes{1, 2, 3}));
    }
  });
}

TEST(InProcessCommunicatorTest, GatherGivesRootThePayloadsIndexedByRank) {
  constexpr int kRanks = 4;
  constexpr int kRoot = 2;
  run_ranks(kRanks, [&](Communicator& comm) {
    // Distinct sizes, rank 0's empty: rank r sends 3r bytes of value r.
    const Bytes mine(static_cast<std::size_t>(3 * comm.rank()), static_cast<std::uint8_t>(comm.rank()));
    const std::vector<Bytes> all = comm.gather(kRoot, mine);
    if (comm.rank() != kRoot) {
      EXPECT_TRUE(all.empty());
      return;
    }
    ASSERT_EQ(all.size(), static_cast<std::size_t>(kRanks));
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(all[r], Bytes(static_cast<std::size_t>(3 * r), static_cast<std::uint8_t>(r)));
    }
  });
}

// 50 rounds of a gather with a rotating root and a barrier: no round's
// payloads leak into another, and nobody leaves a barrier early.
TEST(InProcessCommunicatorTest, RepeatedCollectivesDoNotMixRounds) {
  constexpr int kRanks = 4;
  constexpr int kRounds = 50;
  std::atomic<int> arrivals{0};
  run_ranks(kRanks, [&](Communicator& comm) {
    for (int round = 0; round < kRounds; ++round) {
      const int root = round % kRanks;
      const std::vector<Bytes> all = comm.gather(root, encode({round, comm.rank()}));
      if (comm.rank() == root) {
        ASSERT_EQ(all.size(), static_cast<std::size_t>(kRanks));
        for (int r = 0; r < kRanks; ++r) {
          EXPECT_EQ(decode(all[r], 0), round);
          EXPECT_EQ(decode(all[r], 1), r);
        }
      } else {
        EXPECT_TRUE(all.empty());
      }
      arrivals.fetch_add(1);
      comm.barrier();
      EXPECT_GE(arrivals.load(), (round + 1) * kRanks) << "left barrier " << round << " early";
    }
  });
  EXPECT_EQ(arrivals.load(), kRounds * kRanks);
}

// Two subgroups of four ranks, {0, 2} and {1, 3}, made by their members
// alone: ranks in the listed order, sums and messages stay inside each, and
// a second subgroup of the same ranks is a new one.
TEST(InProcessCommunicatorTest, SubgroupsSumAndCarryMessagesAmongTheirMembersOnly) {
  std::vector<std::vector<float>> sums(4);
  run_ranks(4, [&](Communicator& comm) {
    const std::vector<int> mine = comm.rank() % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3};
    std::unique_ptr<Communicator> sub = comm.subgroup(mine, 5);
    EXPECT_EQ(sub->rank(), comm.rank() / 2);
    EXPECT_EQ(sub->size(), 2);
    std::vector<float> values{static_cast<float>(comm.rank()), 1.0f};
    allreduce_sum(*sub, values);
    sums[static_cast<std::size_t>(comm.rank())] = values;
    sub->send(1 - sub->rank(), 3, encode({comm.rank()}));
    const std::optional<Message> m = receive_blocking(*sub, 1 - sub->rank(), 3, kTestTimeout);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(decode(m->payload, 0), mine[static_cast<std::size_t>(1 - sub->rank())]);
    std::unique_ptr<Communicator> again = comm.subgroup(mine, 5);
    std::vector<float> twice{1.0f};
    allreduce_sum(*again, twice);
    EXPECT_EQ(twice, std::vector<float>{2.0f});
    EXPECT_THROW(comm.subgroup({0, 1, 2, 3}, -1), std::invalid_argument);
    EXPECT_THROW(comm.subgroup({(comm.rank() + 1) % 4}, 5), std::invalid_argument);
    EXPECT_THROW(comm.subgroup({2, 1}, 5), std::invalid_argument);
  });
  EXPECT_EQ(sums[0], (std::vector<float>{2.0f, 2.0f}));
  EXPECT_EQ(sums[2], sums[0]);
  EXPECT_EQ(sums[1], (std::vector<float>{4.0f, 2.0f}));
  EXPECT_EQ(sums[3], sums[1]);
}

TEST(InProcessCommunicatorTest, CommunicatorsOutliveTheNetwork) {
  std::unique_ptr<Communicator> c0;
  {
    InProcessNetwork network(1);
    c0 = network.communicator(0);
  }
  c0->send(0, 0, {9});
  EXPECT_EQ(receive_blocking(*c0, kAnySource, kAnyTag, kTestTimeout).value().payload, Bytes{9});
  EXPECT_EQ(c0->gather(0, {4}), std::vector<Bytes>{Bytes{4}});
  c0->barrier();
}

}  // namespace
}  // namespace cellgan

namespace cellgan {
namespace {

TEST(ReceiveBlocking, EndsAtItsDeadlineWithNothing) {
  InProcessNetwork net(2);
  auto c0 = net.communicator(0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(receive_blocking(*c0, 1, 3, std::chrono::milliseconds(50)).has_value()) << "no message was sent";
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
  EXPECT_EQ(missed_deadline(1, 3, std::chrono::milliseconds(50)), "no message from rank 1 with tag 3 within 50 ms");
  EXPECT_EQ(missed_deadline(kAnySource, kAnyTag, std::chrono::milliseconds(7)),
            "no message from rank any with tag any within 7 ms");
}

}  // namespace
}  // namespace cellgan
