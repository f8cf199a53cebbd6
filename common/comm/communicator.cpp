// The blocking helpers of communicator.h, written once over the interface:
// they poll with short sleeps instead of spinning, so a waiting rank leaves
// its core to the ranks that train (docs/operations.md, "Launching").
//
// Thread-safety: call them on the thread that owns `comm`.
#include "common/comm/communicator.h"

#include <chrono>
#include <string>
#include <thread>

#include <fmt/core.h>

namespace cellgan {
namespace {

constexpr auto kReceivePollSleep = std::chrono::microseconds(100);
constexpr auto kSendPollSleep = std::chrono::microseconds(200);

}  // namespace

std::optional<Message> receive_blocking(Communicator& comm, int source, int tag, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto message = comm.try_receive(source, tag)) return message;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kReceivePollSleep);
  }
}

std::string missed_deadline(int source, int tag, std::chrono::milliseconds timeout) {
  return fmt::format("no message from rank {} with tag {} within {} ms",
                     source == kAnySource ? std::string("any") : std::to_string(source),
                     tag == kAnyTag ? std::string("any") : std::to_string(tag), timeout.count());
}

bool flush_sends(Communicator& comm, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (comm.pending_sends() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kSendPollSleep);
  }
  return true;
}

void allreduce_sum(Communicator& comm, std::vector<float>& values) {
  const auto pending = comm.start_allreduce_sum(values);
  while (!pending->done()) std::this_thread::sleep_for(kSendPollSleep);
}

}  // namespace cellgan
