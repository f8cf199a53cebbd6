// The two-level all-reduce (two_level_allreduce.h) and its node map
// (node_map.h) on W threads over the in-process communicator: nodes by
// count and by host; integer sums exact as flat's; real sums the same bits
// on every worker and within float32's reassociation bound of flat's; one
// node gives reduce_broadcast's bits; only leaders cross nodes; across
// nodes by ring, reduce_broadcast and mpi (the leaders' own communicator),
// with and without a 16-bit wire; step 2 alone for the leaders.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include <fmt/format.h>

#include "common/config.h"
#include "tests/worker/worker_threads.h"
#include "worker/gradient_allreduce.h"
#include "worker/node_map.h"
#include "worker/two_level_allreduce.h"
#include "worker/wire_precision.h"

namespace cellgan {
namespace {

std::vector<float> input(int rank, std::size_t n, bool integers) {
  std::mt19937 rng(static_cast<unsigned>(77 * rank + n));
  std::vector<float> v(n);
  std::uniform_int_distribution<int> ints(-50, 50);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : v) x = integers ? static_cast<float>(ints(rng)) : normal(rng);
  return v;
}

constexpr auto on_workers = test::on_worker_threads;

using Make = std::function<std::unique_ptr<GradientAllreduce>(WorkerExchange&)>;

std::vector<std::vector<float>> sums(int workers, std::size_t n, bool integers, const Make& make) {
  std::vector<std::vector<float>> out(static_cast<std::size_t>(workers));
  on_workers(workers, [&](int r, WorkerExchange& exchange) {
    auto reduce = make(exchange);
    std::vector<float> v = input(r, n, integers);
    EXPECT_FALSE(reduce->sum(v).has_value()) << "worker " << r << ": interrupted";
    out[static_cast<std::size_t>(r)] = std::move(v);
  });
  return out;
}

Make two_level(const NodeMap& nodes, AllreduceKind across, WireCompression c = WireCompression::kNone) {
  return [=](WorkerExchange& e) { return std::make_unique<TwoLevelAllreduce>(e, nodes, across, c); };
}
Make flat(AllreduceKind kind) {
  return [=](WorkerExchange& e) { return make_gradient_allreduce(kind, WireCompression::kNone, e); };
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(NodeMap, ByCountByHostAndLeaders) {
  const NodeMap five = NodeMap::by_count(5, 2);
  EXPECT_EQ(five.nodes(), 3);
  EXPECT_EQ(five.members(1), (std::vector<int>{2, 3}));
  EXPECT_EQ(five.members(2), (std::vector<int>{4}));
  EXPECT_EQ(five.leaders(), (std::vector<int>{0, 2, 4}));
  const NodeMap hosts = NodeMap::by_host({"b", "a", "b", "a"});
  EXPECT_EQ(hosts.nodes(), 2);
  EXPECT_EQ(hosts.node_of(0), 0);  // numbered by first appearance
  EXPECT_EQ(hosts.members(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(hosts.leaders(), (std::vector<int>{0, 1}));
  EXPECT_THROW(NodeMap::by_count(0, 1), std::invalid_argument);
}

TEST(NodeMap, EveryWorkerLearnsEveryHostInRankOrder) {
  std::vector<std::vector<std::string>> seen(3);
  on_workers(3, [&](int r, WorkerExchange& exchange) {
    Waited<std::vector<std::string>> hosts = exchange_hosts(exchange, fmt::format("node-{}", r % 2));
    ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(hosts)) << "worker " << r;
    seen[static_cast<std::size_t>(r)] = std::get<std::vector<std::string>>(hosts);
  });
  for (const auto& s : seen) EXPECT_EQ(s, (std::vector<std::string>{"node-0", "node-1", "node-0"}));
}

constexpr AllreduceKind kAcross[] = {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast, AllreduceKind::kMpi};

TEST(TwoLevelAllreduce, SumsIntegersExactlyForEveryNodeSplit) {
  for (AllreduceKind across : kAcross)
    for (const auto& [w, k] : {std::pair{2, 1}, std::pair{4, 2}, std::pair{5, 2}, std::pair{6, 3}, std::pair{3, 3}}) {
      SCOPED_TRACE(fmt::format("{} across, W {}, {} per node", to_string(across), w, k));
      const auto got = sums(w, 1001, true, two_level(NodeMap::by_count(w, k), across));
      const auto want = sums(w, 1001, true, flat(AllreduceKind::kReduceBroadcast));
      for (int r = 0; r < w; ++r) EXPECT_TRUE(same_bits(got[r], want[0])) << "worker " << r;
    }
}

// Real values: every worker holds the same bits, and they differ from the
// flat sum only by reassociation: a float32 sum of W terms taken in two
// orders differs by at most 2(W−1)·2⁻²⁴·Σ|x_r|.
TEST(TwoLevelAllreduce, RealSumsAgreeOnEveryWorkerAndWithFlatUpToReassociation) {
  for (AllreduceKind across : kAcross) {
    SCOPED_TRACE(to_string(across));
    const int w = 4;
    const std::size_t n = 4099;
    const auto got = sums(w, n, false, two_level(NodeMap::by_count(w, 2), across));
    const auto want = sums(w, n, false, flat(AllreduceKind::kReduceBroadcast));
    for (int r = 1; r < w; ++r) EXPECT_TRUE(same_bits(got[0], got[r])) << "worker " << r;
    std::vector<std::vector<float>> inputs;
    for (int r = 0; r < w; ++r) inputs.push_back(input(r, n, false));
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double magnitude = 0.0;
      for (const auto& v : inputs) magnitude += std::fabs(v[i]);
      ASSERT_LE(std::fabs(got[0][i] - want[0][i]), 2.0 * (w - 1) * std::ldexp(1.0, -24) * magnitude) << i;
      differ += got[0][i] != want[0][i];
    }
    EXPECT_GT(differ, 0u) << "no value was reassociated: were the nodes summed first?";
  }
}

TEST(TwoLevelAllreduce, OneNodeIsReduceBroadcastToTheBit) {
  const auto got = sums(3, 777, false, two_level(NodeMap::by_count(3, 3), AllreduceKind::kRing));
  const auto want = sums(3, 777, false, flat(AllreduceKind::kReduceBroadcast));
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(same_bits(got[r], want[r])) << "worker " << r;
}

// With mpi across nodes the leaders' float32 sum is rounded to the wire
// before it goes back: every worker still ends with the same bits.
TEST(TwoLevelAllreduce, SixteenBitWireGivesEveryWorkerTheSameBits) {
  for (AllreduceKind across : {AllreduceKind::kRing, AllreduceKind::kMpi})
    for (WireCompression c : {WireCompression::kFp16, WireCompression::kBf16}) {
      SCOPED_TRACE(fmt::format("{} across, {}", to_string(across), to_string(c)));
      const auto got = sums(4, 999, false, two_level(NodeMap::by_count(4, 2), across, c));
      for (int r = 1; r < 4; ++r) EXPECT_TRUE(same_bits(got[0], got[r])) << "worker " << r;
      std::vector<float> rounded = got[0];
      round_to_wire(c, rounded.data(), rounded.size());
      EXPECT_TRUE(same_bits(rounded, got[0])) << "the sum is not in the wire's precision";
      const auto exact = sums(4, 999, true, two_level(NodeMap::by_count(4, 2), across, c));
      const auto want = sums(4, 999, true, flat(AllreduceKind::kReduceBroadcast));
      EXPECT_TRUE(same_bits(exact[0], want[0])) << "small integers travel exactly in 16 bits";
    }
}

// W = 4 as 2 nodes × 2: only the two leaders send across nodes, a ring of
// two sending 2(N−1)/N = 1 buffer each; members send one buffer to their
// leader.
// (mpi's tally counts what a ring of the leaders would send.)
TEST(TwoLevelAllreduce, OnlyLeadersCrossNodes) {
  for (AllreduceKind kind : {AllreduceKind::kRing, AllreduceKind::kMpi}) {
    SCOPED_TRACE(to_string(kind));
    const std::size_t n = 1000;
    std::vector<std::uint64_t> across(4), total(4);
    on_workers(4, [&](int r, WorkerExchange& exchange) {
      TwoLevelAllreduce reduce(exchange, NodeMap::by_count(4, 2), kind, WireCompression::kNone);
      std::vector<float> v = input(r, n, false);
      EXPECT_FALSE(reduce.sum(v).has_value());
      across[static_cast<std::size_t>(r)] = reduce.across_nodes().bytes_sent;
      total[static_cast<std::size_t>(r)] = reduce.tally().bytes_sent;
    });
    EXPECT_EQ(across, (std::vector<std::uint64_t>{n * 4, 0, n * 4, 0}));
    EXPECT_EQ(total, (std::vector<std::uint64_t>{2 * n * 4, n * 4, 2 * n * 4, n * 4}));
  }
}

TEST(TwoLevelAllreduce, AutoIsTwoLevelOnlyAcrossNodesAndNeverWithNccl) {
  DataParallelConfig config;
  config.hierarchy = AllreduceHierarchy::kAuto;
  EXPECT_FALSE(cellgan::two_level(config, NodeMap::by_count(4, 4)));
  EXPECT_TRUE(cellgan::two_level(config, NodeMap::by_count(4, 2)));
  config.allreduce = AllreduceKind::kMpi;
  EXPECT_TRUE(cellgan::two_level(config, NodeMap::by_count(4, 2)));
  EXPECT_FALSE(cellgan::two_level(config, NodeMap::by_count(4, 4)));
  config.allreduce = AllreduceKind::kNccl;
  EXPECT_FALSE(cellgan::two_level(config, NodeMap::by_count(4, 2)));
  config.allreduce = AllreduceKind::kRing;
  config.hierarchy = AllreduceHierarchy::kFlat;
  EXPECT_FALSE(cellgan::two_level(config, NodeMap::by_count(4, 2)));
}

// Step 2 alone (as the NCCL two-level all-reduce uses it): only leaders get
// one, and it sums over them alone.
TEST(TwoLevelAllreduce, AcrossNodesIsTheLeadersAloneAndNeverNccl) {
  const NodeMap nodes = NodeMap::by_count(5, 2);  // leaders 0, 2, 4
  std::vector<std::vector<float>> got(5);
  on_workers(5, [&](int r, WorkerExchange& exchange) {
    auto across = make_across_nodes(exchange, nodes, AllreduceKind::kMpi, WireCompression::kNone);
    EXPECT_EQ(across != nullptr, r % 2 == 0) << "worker " << r;
    if (!across) return;
    EXPECT_EQ(across->exchange().local_size(), 3);
    std::vector<float> v{static_cast<float>(r), 1.0f};
    EXPECT_FALSE(across->sum(v).has_value());
    got[static_cast<std::size_t>(r)] = v;
  });
  for (int r : {0, 2, 4}) EXPECT_EQ(got[r], (std::vector<float>{6.0f, 3.0f})) << "worker " << r;
  on_workers(2, [&](int, WorkerExchange& exchange) {
    EXPECT_THROW(make_across_nodes(exchange, NodeMap::by_count(2, 1), AllreduceKind::kNccl, WireCompression::kNone),
                 std::logic_error);
  });
}

}  // namespace
}  // namespace cellgan
