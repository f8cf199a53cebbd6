// Test helper: a WorkerExchange straight over one Communicator (an
// in-process or MPI one), with no communication thread, so that the
// all-reduces and the replica trainer run on W threads of a test (or W
// ranks of mpirun) without the job around them. Receives wait at most 30 s,
// then return an Aborted interruption that names the missed message.
//
// Thread-safety: belongs to the thread that owns the communicator.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "common/comm/communicator.h"
#include "worker/worker_exchange.h"

namespace cellgan::test {

class CommunicatorExchange final : public WorkerExchange {
 public:
  explicit CommunicatorExchange(Communicator& comm) : comm_(comm) {}
  int local_rank() const override { return comm_.rank(); }
  int local_size() const override { return comm_.size(); }
  void send_local(int dest, int tag, Bytes payload) override { comm_.send(dest, tag, std::move(payload)); }
  Waited<Message> receive_local(int source, int tag) override {
    constexpr std::chrono::milliseconds kTimeout{30000};
    if (std::optional<Message> m = receive_blocking(comm_, source, tag, kTimeout)) return std::move(*m);
    return Interruption(Aborted{kExitFailure, missed_deadline(source, tag, kTimeout)});
  }
  Waited<std::optional<Message>> try_receive_local(int source, int tag) override {
    return comm_.try_receive(source, tag);
  }
  std::optional<Interruption> interrupted() override { return std::nullopt; }  // no master here
  std::optional<Interruption> allreduce_local(std::vector<float>& values) override {
    allreduce_sum(comm_, values);
    return std::nullopt;
  }
  // On a subgroup made at the first call for `ranks` (every member is
  // there: no handshake), kept for the next.
  std::optional<Interruption> allreduce_among(const std::vector<int>& ranks, std::vector<float>& values) override {
    if (!group_ || group_ranks_ != ranks) {
      group_ = comm_.subgroup(ranks, kGroupTag);
      group_ranks_ = ranks;
    }
    allreduce_sum(*group_, values);
    return std::nullopt;
  }

 private:
  static constexpr int kGroupTag = 1;
  Communicator& comm_;
  std::unique_ptr<Communicator> group_;
  std::vector<int> group_ranks_;
};

}  // namespace cellgan::test
