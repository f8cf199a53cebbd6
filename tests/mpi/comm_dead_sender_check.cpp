// comm_dead_sender_check: a peer that dies in the middle of a message must
// not silence the others. Run as `mpirun --enable-recovery -np 3
// comm_dead_sender_check` by comm_dead_sender.sh:
// - rank 2 sends rank 0 a message far above the eager limit and SIGKILLs
//   itself at once: rank 0 matches it, but it never arrives in full;
// - rank 1 then sends rank 0 kSmall small messages, as a live worker's
//   heartbeats;
// - rank 0 receives from any source and any tag (as the master does) and
//   must take every one of rank 1's, in order, within kPatience.
// Prints one "PASS" or "FAIL" line on rank 0. The ranks leave with _exit(),
// not MPI_Finalize(), which can hang once a rank is lost (docs/results.md).
//
// Thread-safety: single-threaded; the main thread owns MPI.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "common/comm/communicator.h"
#include "common/comm/mpi_session.h"

namespace {

constexpr int kTagBig = 3;
constexpr int kTagSmall = 2;
constexpr int kSmall = 20;
constexpr std::size_t kBigBytes = 1 << 20;
constexpr std::chrono::seconds kPatience{10};

int run_master(cellgan::Communicator& world) {
  // Rank 2 is dead by now, its message matched by the first receive below.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int next = 0;
  const auto give_up = std::chrono::steady_clock::now() + kPatience;
  while (next < kSmall && std::chrono::steady_clock::now() < give_up) {
    const auto m = world.try_receive();
    if (!m) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (m->source == 2) {
      std::printf("FAIL: the dead rank's message arrived in full (%zu bytes)\n", m->payload.size());
      return 1;
    }
    if (m->tag != kTagSmall || m->payload.size() != 1 || m->payload[0] != next) {
      std::printf("FAIL: expected rank 1's message %d\n", next);
      return 1;
    }
    ++next;
  }
  if (next < kSmall) {
    std::printf("FAIL: %d of rank 1's %d messages received in %lld s after rank 2 died mid-message\n", next, kSmall,
                static_cast<long long>(kPatience.count()));
    return 1;
  }
  std::printf("PASS: all %d of rank 1's messages received while rank 2's never arrives\n", kSmall);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cellgan::MpiSession session(&argc, &argv);
  auto world = session.world();
  int code = 0;
  if (session.world_rank() == 2) {
    world->send(0, kTagBig, cellgan::Bytes(kBigBytes, 1));
    ::raise(SIGKILL);
  } else if (session.world_rank() == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    for (int i = 0; i < kSmall; ++i) {
      world->send(0, kTagSmall, cellgan::Bytes{static_cast<std::uint8_t>(i)});
      world->pending_sends();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    cellgan::flush_sends(*world, std::chrono::seconds(5));
    std::this_thread::sleep_for(std::chrono::seconds(1));
  } else {
    code = run_master(*world);
  }
  std::fflush(nullptr);
  ::_exit(code);
}
