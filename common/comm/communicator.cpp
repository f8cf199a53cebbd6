// The blocking helpers of communicator.h, written once over the interface:
// they poll with short sleeps instead of spinning, so a waiting rank leaves
// its core to the ranks that train (docs/operations.md, "Launching").
//
// Thread-safety: call them on the thread that owns `comm`.
#include "common/comm/communicator.h"

#include <chrono>
#include <thread>

namespace cellgan {
namespace {

constexpr auto kReceivePollSleep = std::chrono::microseconds(100);
constexpr auto kSendPollSleep = std::chrono::microseconds(200);

}  // namespace

Message receive_blocking(Communicator& comm, int source, int tag) {
  for (;;) {
    if (auto message = comm.try_receive(source, tag)) return std::move(*message);
    std::this_thread::sleep_for(kReceivePollSleep);
  }
}

void flush_sends(Communicator& comm) {
  while (comm.pending_sends() > 0) std::this_thread::sleep_for(kSendPollSleep);
}

}  // namespace cellgan
