// comm_mpi_check: the multi-rank check of cellgan_comm's MPI side, run by
// CTest as `mpirun -np 4 comm_mpi_check` (test mpi_comm_4ranks).
//
// It builds the job's three communicators the way cellgan does: WORLD,
// GLOBAL = {0,1,2,3} through group(), LOCAL = a periodic 1x3 Cartesian
// communicator over the workers {1,2,3}. Then it checks ranks and sizes, a
// ring exchange on LOCAL (small and MLP-sized messages), an any-source
// receive on WORLD, gathers on GLOBAL with distinct payload sizes and
// varying roots, barriers, and subgroups of LOCAL ({0, 2} and {1} at once)
// that sum and carry messages, while LOCAL itself, polled for any message,
// sees none of their creation; GLOBAL, made without a twin, has none. Every failed check prints one "FAIL" line to
// stderr; the exit status is 0 only if every check on every rank passed.
// An exception aborts the whole job (exit status non-zero), so no rank hangs.
//
// Thread-safety: single-threaded; the main thread owns MPI.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/comm/communicator.h"
#include "common/comm/mpi_session.h"
#include "common/log.h"

namespace cellgan {
namespace {

constexpr int kRanks = 4;
constexpr int kTagGlobal = 1;
constexpr int kTagLocal = 2;
constexpr int kTagRingSmall = 11;
constexpr int kTagRingLarge = 12;
constexpr int kTagHello = 13;
constexpr int kTagSubgroup = 14;
constexpr std::size_t kLargeBytes = 2600000;  // about one MLP's parameters
constexpr std::chrono::milliseconds kTestTimeout{30000};  // far beyond any healthy wait here

int g_failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++g_failures;
  log::error("FAIL: {}", what);
}

// receive_blocking(), a missed deadline counted as a failure (and an empty
// message returned, which the caller's checks then reject too).
Message receive_checked(Communicator& comm, int source, int tag, const std::string& what) {
  std::optional<Message> m = receive_blocking(comm, source, tag, kTestTimeout);
  check(m.has_value(), what + ": " + missed_deadline(source, tag, kTestTimeout));
  return m ? std::move(*m) : Message{};
}

// Deterministic bytes that differ by `seed`, so mixed-up payloads show.
Bytes pattern(std::size_t n, int seed) {
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>((i * 31 + 7 * seed + 1) & 0xff);
  return out;
}

void check_ring_on_local(Communicator& local) {
  const int r = local.rank();
  const int n = local.size();
  const int right = (r + 1) % n;
  const int left = (r + n - 1) % n;
  local.send(right, kTagRingLarge, pattern(kLargeBytes, 100 + r));
  local.send(right, kTagRingSmall, pattern(1000 + r, r));
  // Take the small one first although it was sent second: tags are
  // separate streams.
  const Message small = receive_checked(local, left, kTagRingSmall, "LOCAL ring: small message");
  check(small.source == left && small.tag == kTagRingSmall, "LOCAL ring: small message header");
  check(small.payload == pattern(1000 + left, left), "LOCAL ring: small payload from the left neighbour");
  const Message large = receive_checked(local, kAnySource, kTagRingLarge, "LOCAL ring: large message");
  check(large.source == left, "LOCAL ring: large message source");
  check(large.payload == pattern(kLargeBytes, 100 + left), "LOCAL ring: large payload from the left neighbour");
  flush_sends(local, kTestTimeout);
  check(local.pending_sends() == 0, "LOCAL ring: sends still pending after flush_sends");
  check(!local.try_receive().has_value(), "LOCAL ring: unexpected extra message");
}

void check_gathers_on_global(Communicator& global) {
  // Distinct sizes per rank, the root's own empty.
  const std::size_t sizes[kRanks] = {0, 17, 100000, 3000000};
  const int r = global.rank();
  const std::vector<Bytes> all = global.gather(0, pattern(sizes[r], r));
  if (r == 0) {
    check(all.size() == kRanks, "GLOBAL gather: root got the wrong number of payloads");
    for (int i = 0; i < kRanks && i < static_cast<int>(all.size()); ++i) {
      check(all[i] == pattern(sizes[i], i), "GLOBAL gather: payload of rank " + std::to_string(i));
    }
  } else {
    check(all.empty(), "GLOBAL gather: a non-root rank got payloads");
  }
  // Repeated gathers with a moving root must not mix rounds.
  for (int round = 0; round < 20; ++round) {
    const int root = round % kRanks;
    const auto got = global.gather(root, pattern(static_cast<std::size_t>(10 * r + round), 1000 * round + r));
    if (r != root) {
      check(got.empty(), "GLOBAL gather round " + std::to_string(round) + ": non-root got payloads");
      continue;
    }
    check(got.size() == kRanks, "GLOBAL gather round " + std::to_string(round) + ": wrong count");
    for (int i = 0; i < kRanks && i < static_cast<int>(got.size()); ++i) {
      check(got[i] == pattern(static_cast<std::size_t>(10 * i + round), 1000 * round + i),
            "GLOBAL gather round " + std::to_string(round) + ": payload of rank " + std::to_string(i));
    }
  }
}

// Called by the members of `ranks` of `parent` alone: their subgroup has
// them in that order, sums (MPI_Iallreduce) over them alone and carries a
// message between its first two, if two.
void check_subgroup(Communicator& parent, const std::vector<int>& ranks) {
  const std::string what = fmt::format("subgroup {} of {} ranks", fmt::join(ranks, ","), parent.size());
  std::unique_ptr<Communicator> sub = parent.subgroup(ranks, kTagSubgroup);
  const auto index = static_cast<int>(std::find(ranks.begin(), ranks.end(), parent.rank()) - ranks.begin());
  check(sub->rank() == index && sub->size() == static_cast<int>(ranks.size()), what + ": rank/size");
  std::vector<float> values{static_cast<float>(parent.rank() + 1), 1.0f};
  allreduce_sum(*sub, values);
  float want = 0.0f;
  for (int r : ranks) want += static_cast<float>(r + 1);
  check(values == std::vector<float>{want, static_cast<float>(ranks.size())}, what + ": sum");
  if (sub->rank() == 0 && sub->size() > 1) sub->send(1, kTagHello, pattern(7, parent.rank()));
  if (sub->rank() == 1 && sub->size() > 1) {
    const Message m = receive_checked(*sub, 0, kTagHello, what + ": message");
    check(m.payload == pattern(7, ranks[0]), what + ": payload");
  }
  flush_sends(*sub, kTestTimeout);
  sub->barrier();
}

void run(MpiSession& session) {
  const int me = session.world_rank();
  auto world = session.world();
  check(world->rank() == me && world->size() == kRanks, "WORLD rank/size");

  auto global = session.group({0, 1, 2, 3}, kTagGlobal);
  check(global->rank() == me && global->size() == kRanks, "GLOBAL rank/size");

  std::unique_ptr<Communicator> local;
  if (me != 0) {
    local = session.cartesian({1, 2, 3}, /*rows=*/1, /*cols=*/3, kTagLocal);
    check(local->rank() == me - 1 && local->size() == kRanks - 1, "LOCAL rank/size (expected world rank - 1, 3)");
    check_ring_on_local(*local);
    if (local->rank() == 0) {  // rank 2 is creating {0, 2} meanwhile: nothing of it on LOCAL
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      while (std::chrono::steady_clock::now() < until) {
        check(!local->try_receive().has_value(), "LOCAL: a message while a subgroup was being made");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    check_subgroup(*local, local->rank() == 1 ? std::vector<int>{1} : std::vector<int>{0, 2});
    local->barrier();
  } else {
    bool rejected = false;
    try {
      session.group({1, 2, 3}, kTagLocal);
    } catch (const std::invalid_argument&) {
      rejected = true;
    }
    check(rejected, "group() by a non-member should throw std::invalid_argument");
  }

  if (me == 0) {
    std::vector<bool> seen(kRanks, false);
    for (int i = 1; i < kRanks; ++i) {
      const Message m = receive_checked(*world, kAnySource, kTagHello, "WORLD any-source receive");
      const bool valid = m.source >= 1 && m.source < kRanks && !seen[m.source];
      check(valid, "WORLD any-source receive: bad or repeated source " + std::to_string(m.source));
      if (valid) seen[m.source] = true;
      check(m.payload == pattern(5, m.source), "WORLD any-source receive: payload");
    }
  } else {
    world->send(0, kTagHello, pattern(5, me));
    flush_sends(*world, kTestTimeout);
  }

  check_gathers_on_global(*global);
  bool refused = false;
  try {
    global->subgroup({me}, kTagSubgroup);
  } catch (const std::logic_error&) {
    refused = true;
  }
  check(refused, "GLOBAL, made without a twin, should refuse a subgroup");
  global->barrier();
  world->barrier();

  // Every rank's verdict reaches rank 0, which prints the summary.
  const Bytes verdict = {static_cast<std::uint8_t>(g_failures > 0 ? 1 : 0)};
  const auto verdicts = world->gather(0, verdict);
  if (me == 0) {
    int failed_ranks = 0;
    for (const auto& v : verdicts) failed_ranks += (v.size() == 1 && v[0] == 0) ? 0 : 1;
    if (failed_ranks == 0) {
      log::info("comm_mpi_check: PASS on {} ranks", kRanks);
    } else {
      log::error("FAIL: comm_mpi_check: {} rank(s) failed checks", failed_ranks);
      ++g_failures;
    }
  }
}

}  // namespace
}  // namespace cellgan

int main(int argc, char** argv) {
  using namespace cellgan;
  try {
    MpiSession session(&argc, &argv);
    if (session.world_size() != kRanks) {
      log::error("FAIL: comm_mpi_check needs exactly {} ranks, got {}", kRanks, session.world_size());
      return 1;
    }
    try {
      run(session);
    } catch (const std::exception& e) {
      log::error("FAIL: exception: {}", e.what());
      session.abort(1);
    }
  } catch (const std::exception& e) {
    log::error("FAIL: MPI start-up: {}", e.what());
    return 1;
  }
  return g_failures == 0 ? 0 : 1;
}
