// allreduce_mpi_check: the data-parallel all-reduces under a real mpirun
// (CTest runs it with -np 1, 2 and 3). Over WORLD, for odd sizes: the ring
// and the single reducer give the same sums as MPI_Allreduce — to the bit
// on integer values, within float rounding on real ones — and every rank
// holds the same bits, of our sums and of MPI's. Every failed check prints a "FAIL" line; the exit
// status is 0 only if every check on every rank passed.
//
// Thread-safety: single-threaded; the main thread owns MPI.
#include <cmath>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "common/comm/communicator.h"
#include "common/comm/mpi_session.h"
#include "common/log.h"
#include "tests/worker/communicator_exchange.h"
#include "worker/gradient_allreduce.h"

namespace cellgan {
namespace {

int g_failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++g_failures;
  log::error("FAIL: {}", what);
}

std::vector<float> input(int rank, std::size_t n, bool integers) {
  std::mt19937 rng(static_cast<unsigned>(7919 * rank + n));
  std::uniform_int_distribution<int> ints(-1000, 1000);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = integers ? static_cast<float>(ints(rng)) : normal(rng);
  return v;
}

Bytes bytes_of(const std::vector<float>& v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(v.data());
  return Bytes(p, p + v.size() * sizeof(float));
}

void check_against_mpi(Communicator& world, AllreduceKind kind, std::size_t n, bool integers) {
  const std::string what = fmt::format("{} on {} ranks, {} {} values", to_string(kind), world.size(), n,
                                       integers ? "integer" : "real");
  std::vector<float> reference = input(world.rank(), n, integers);
  allreduce_sum(world, reference);  // MPI_Iallreduce
  test::CommunicatorExchange exchange(world);
  auto reduce = make_gradient_allreduce(kind, WireCompression::kNone, exchange);
  std::vector<float> ours = input(world.rank(), n, integers);
  if (const std::optional<Interruption> interruption = reduce->sum(ours)) {
    const auto* abort = std::get_if<Aborted>(&*interruption);
    check(false, fmt::format("{}: interrupted: {}", what, abort ? abort->reason : "a rehoming"));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const bool ok = integers ? ours[i] == reference[i]
                             : std::fabs(ours[i] - reference[i]) <= 1e-5f * world.size() * (1.0f + std::fabs(reference[i]));
    if (!ok) {
      check(false, fmt::format("{}: value {} is {} against MPI_Allreduce's {}", what, i, ours[i], reference[i]));
      break;
    }
  }
  // Every rank the same bits, ours and MPI's (allreduce mpi relies on
  // that for identical replicas): rank 0 compares the gathered sums.
  const std::vector<Bytes> all = world.gather(0, bytes_of(ours));
  for (std::size_t r = 1; r < all.size(); ++r) check(all[r] == all[0], fmt::format("{}: rank {} differs from rank 0", what, r));
  const std::vector<Bytes> all_mpi = world.gather(0, bytes_of(reference));
  for (std::size_t r = 1; r < all_mpi.size(); ++r)
    check(all_mpi[r] == all_mpi[0], fmt::format("{}: MPI's sum on rank {} differs from rank 0's", what, r));
}

int run(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  auto world = session.world();
  for (AllreduceKind kind : {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast})
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{17}, std::size_t{1001},
                          std::size_t{100003}})
      for (bool integers : {true, false}) check_against_mpi(*world, kind, n, integers);
  world->barrier();
  const int failures = g_failures;
  if (world->rank() == 0 && failures == 0) log::info("allreduce_mpi_check: all checks passed on {} ranks", world->size());
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace cellgan

int main(int argc, char** argv) {
  try {
    return cellgan::run(argc, argv);
  } catch (const std::exception& e) {
    cellgan::log::error("allreduce_mpi_check: {}", e.what());
    return 1;
  }
}
