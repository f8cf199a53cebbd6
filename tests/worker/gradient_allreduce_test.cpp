// The all-reduces of the data-parallel layout (gradient_allreduce.h) on W
// threads over the in-process communicator: every algorithm gives every
// worker the same bits; the sums are exact on integer values, for odd
// sizes and W = 1..4; fp16 and bf16 stay within the bound that
// wire_precision.h states; tensor fusion of 0, a few and many bytes gives
// the same sums.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "common/comm/in_process_communicator.h"
#include "tests/worker/worker_threads.h"
#include "worker/gradient_allreduce.h"
#include "worker/gradient_fusion.h"
#include "worker/wire_precision.h"

namespace cellgan {
namespace {

constexpr AllreduceKind kKinds[] = {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast, AllreduceKind::kMpi};

// Worker r's input: `n` values, integers in -50..50 or normal(0, scale).
std::vector<float> input(int rank, std::size_t n, bool integers, float scale = 1.0f) {
  std::mt19937 rng(static_cast<unsigned>(1000 * rank + n));
  std::vector<float> v(n);
  std::uniform_int_distribution<int> ints(-50, 50);
  std::normal_distribution<float> normal(0.0f, scale);
  for (float& x : v) x = integers ? static_cast<float>(ints(rng)) : normal(rng);
  return v;
}

// Runs `body(rank, exchange)` on `workers` threads; the bodies write their
// results into the caller's slots.
constexpr auto on_workers = test::on_worker_threads;

// Every worker's sum of the inputs with `kind` and `compression`.
std::vector<std::vector<float>> sums(AllreduceKind kind, WireCompression compression, int workers, std::size_t n,
                                     bool integers, float scale = 1.0f) {
  std::vector<std::vector<float>> out(static_cast<std::size_t>(workers));
  on_workers(workers, [&](int r, WorkerExchange& exchange) {
    auto reduce = make_gradient_allreduce(kind, compression, exchange);
    std::vector<float> v = input(r, n, integers, scale);
    EXPECT_FALSE(reduce->sum(v).has_value()) << "worker " << r << ": interrupted";
    out[static_cast<std::size_t>(r)] = std::move(v);
  });
  return out;
}

std::vector<double> exact_sum(int workers, std::size_t n, bool integers, float scale = 1.0f) {
  std::vector<double> s(n, 0.0);
  for (int r = 0; r < workers; ++r) {
    const auto v = input(r, n, integers, scale);
    for (std::size_t i = 0; i < n; ++i) s[i] += v[i];
  }
  return s;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(GradientAllreduce, EveryAlgorithmSumsIntegersExactlyForOddSizesAndAnyWorkerCount) {
  for (AllreduceKind kind : kKinds)
    for (int w : {1, 2, 3, 4})
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1001}}) {
        SCOPED_TRACE(fmt::format("{}, W {}, n {}", to_string(kind), w, n));
        const auto got = sums(kind, WireCompression::kNone, w, n, true);
        const auto want = exact_sum(w, n, true);
        for (int r = 0; r < w; ++r)
          for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[r][i], static_cast<float>(want[i])) << "worker " << r;
      }
}

TEST(GradientAllreduce, EveryWorkerGetsTheSameBitsOnRealValues) {
  for (AllreduceKind kind : kKinds)
    for (int w : {2, 3}) {
      SCOPED_TRACE(fmt::format("{}, W {}", to_string(kind), w));
      const auto got = sums(kind, WireCompression::kNone, w, 12345, false);
      const auto want = exact_sum(w, 12345, false);
      for (int r = 1; r < w; ++r) EXPECT_TRUE(same_bits(got[0], got[r])) << "worker " << r << " differs from worker 0";
      for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[0][i], want[i], 1e-5 * w) << i;
    }
}

// wire_precision.h: one rounding moves x by at most |x|·u (+ 2⁻²⁵ below
// fp16's normal range); the all-reduce rounds at most W times values
// bounded by S = Σ|x_r|, so |sum − exact| <= W·(u·S + 2⁻²⁵).
TEST(GradientAllreduce, SixteenBitWireStaysWithinTheStatedBound) {
  for (const auto& [compression, u] :
       {std::pair{WireCompression::kFp16, std::ldexp(1.0, -11)}, std::pair{WireCompression::kBf16, std::ldexp(1.0, -8)}})
    for (AllreduceKind kind : {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast})
      for (int w : {2, 3}) {
        SCOPED_TRACE(fmt::format("{}, {}, W {}", to_string(compression), to_string(kind), w));
        const std::size_t n = 4099;
        const float scale = 1e-2f;  // gradient-sized values
        const auto got = sums(kind, compression, w, n, false, scale);
        const auto want = exact_sum(w, n, false, scale);
        std::vector<double> bound(n, 0.0);
        for (int r = 0; r < w; ++r) {
          const auto v = input(r, n, false, scale);
          for (std::size_t i = 0; i < n; ++i) bound[i] += std::fabs(v[i]);
        }
        double worst = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
          const double limit = w * (u * bound[i] + std::ldexp(1.0, -25));
          ASSERT_LE(std::fabs(got[0][i] - want[i]), limit) << "value " << i;
          worst = std::max(worst, std::fabs(got[0][i] - want[i]) / limit);
        }
        for (int r = 1; r < w; ++r) EXPECT_TRUE(same_bits(got[0], got[r])) << "worker " << r;
        EXPECT_GT(worst, 0.0) << "no rounding at all: the values did not travel in 16 bits";
      }
}

TEST(GradientAllreduce, SixteenBitWireHalvesTheBytesSent) {
  for (AllreduceKind kind : {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast}) {
    std::vector<std::uint64_t> bytes(2);
    for (const WireCompression c : {WireCompression::kNone, WireCompression::kFp16})
      on_workers(3, [&](int r, WorkerExchange& exchange) {
        auto reduce = make_gradient_allreduce(kind, c, exchange);
        std::vector<float> v = input(r, 3000, false);
        EXPECT_FALSE(reduce->sum(v).has_value()) << "worker " << r << ": interrupted";
        if (r == 1) bytes[c == WireCompression::kNone ? 0 : 1] = reduce->tally().bytes_sent;
      });
    EXPECT_EQ(bytes[1] * 2, bytes[0]) << to_string(kind);
    // Worker 1 of 3: the ring sends 2(W-1)/W of the buffer, reduce_broadcast all of it once.
    EXPECT_EQ(bytes[0], kind == AllreduceKind::kRing ? 2u * 2u * 1000u * 4u : 3000u * 4u) << to_string(kind);
  }
}

TEST(GradientFusion, GroupsFillBuffersInOrderAndALargeTensorGoesAlone) {
  using Groups = std::vector<std::vector<std::size_t>>;
  const std::vector<std::int64_t> numels = {10, 10, 100, 5, 5};  // 40, 40, 400, 20, 20 bytes
  EXPECT_EQ(fusion_groups(numels, 0), (Groups{{0}, {1}, {2}, {3}, {4}}));
  EXPECT_EQ(fusion_groups(numels, 80), (Groups{{0, 1}, {2}, {3, 4}}));
  EXPECT_EQ(fusion_groups(numels, 1 << 20), (Groups{{0, 1, 2, 3, 4}}));
}

TEST(GradientFusion, FusionSizesGiveTheSameSums) {
  const std::vector<std::int64_t> shapes = {33, 1, 250, 7, 1024, 3};
  for (AllreduceKind kind : kKinds)
    for (bool integers : {true, false}) {
      std::vector<std::vector<float>> results;
      for (std::int64_t fusion : {std::int64_t{0}, std::int64_t{64}, std::int64_t{64} << 20}) {
        std::vector<float> first;
        on_workers(3, [&](int r, WorkerExchange& exchange) {
          auto reduce = make_gradient_allreduce(kind, WireCompression::kNone, exchange);
          std::vector<torch::Tensor> tensors;
          std::int64_t total = 0;
          for (std::int64_t s : shapes) total += s;
          const std::vector<float> v = input(r, static_cast<std::size_t>(total), integers);
          std::int64_t at = 0;
          for (std::int64_t s : shapes) {
            tensors.push_back(torch::from_blob(const_cast<float*>(v.data() + at), {s}, torch::kFloat32).clone());
            at += s;
          }
          EXPECT_FALSE(allreduce_fused(tensors, fusion, *reduce).has_value()) << "worker " << r << ": interrupted";
          if (r != 0) return;
          for (const auto& t : tensors) first.insert(first.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
        });
        results.push_back(first);
      }
      SCOPED_TRACE(fmt::format("{}, {}", to_string(kind), integers ? "integers" : "real values"));
      for (std::size_t i = 1; i < results.size(); ++i) {
        if (integers || kind != AllreduceKind::kRing) {
          EXPECT_TRUE(same_bits(results[0], results[i])) << "fusion choice " << i;
        } else {  // the ring's chunks move with the packing: rounding only
          ASSERT_EQ(results[0].size(), results[i].size());
          for (std::size_t k = 0; k < results[0].size(); ++k) ASSERT_NEAR(results[0][k], results[i][k], 1e-5) << k;
        }
      }
    }
}

}  // namespace
}  // namespace cellgan
