// Test helper: a WorkerExchange straight over one Communicator (an
// in-process or MPI one), with no communication thread, so that the
// all-reduces and the replica trainer run on W threads of a test (or W
// ranks of mpirun) without the job around them. Receives wait at most 30 s.
//
// Thread-safety: belongs to the thread that owns the communicator.
#pragma once

#include <chrono>

#include "common/comm/communicator.h"
#include "worker/worker_exchange.h"

namespace cellgan::test {

class CommunicatorExchange final : public WorkerExchange {
 public:
  explicit CommunicatorExchange(Communicator& comm) : comm_(comm) {}
  int local_rank() const override { return comm_.rank(); }
  int local_size() const override { return comm_.size(); }
  void send_local(int dest, int tag, Bytes payload) override { comm_.send(dest, tag, std::move(payload)); }
  Message receive_local(int source, int tag) override {
    return receive_blocking(comm_, source, tag, std::chrono::seconds(30));
  }
  std::optional<Message> try_receive_local(int source, int tag) override { return comm_.try_receive(source, tag); }
  void allreduce_local(std::vector<float>& values) override { allreduce_sum(comm_, values); }

 private:
  Communicator& comm_;
};

}  // namespace cellgan::test
