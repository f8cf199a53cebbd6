// What a layout (worker_layout.h) may do with the other workers: send a
// message to a worker and receive the next one from a worker, over LOCAL,
// and sum floats over every worker with LOCAL's start_allreduce_sum().
// The worker's communication thread (worker_comm.h) carries them.
//
// Contract:
// - Workers are LOCAL ranks 0..local_size()-1 (world rank = LOCAL rank + 1
//   for a full set of workers).
// - Messages from one worker with one tag arrive in send order.
// - allreduce_local() is a collective: every worker calls it with the same
//   length, in the same order. It waits like receive_local() (JobAborted,
//   or Rehomed from WorkerComm), but a sum with a dead rank never completes
//   (docs/architecture.md), so only the data-parallel layout's
//   `allreduce: mpi` uses it.
// - receive_local() blocks until the message has arrived, or throws
//   JobAborted when the run ends early (the master aborts it, or has been
//   silent for runtime.dead_after_ms): no wait lasts forever.
// - try_receive_local() never blocks: the next message from `source` with
//   `tag` if one has arrived, else none (it throws as receive_local() does
//   once the run has ended).
//
// Thread-safety: called from the training thread only.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/comm/communicator.h"

namespace cellgan {

// The run ended while this worker waited. exit_code() is the code every
// rank exits with (common/error.h).
class JobAborted : public std::runtime_error {
 public:
  JobAborted(int exit_code, const std::string& reason) : std::runtime_error(reason), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

class WorkerExchange {
 public:
  virtual ~WorkerExchange() = default;
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  // Queues `payload` for worker `dest`; never blocks.
  virtual void send_local(int dest, int tag, Bytes payload) = 0;
  // The next message from worker `source` with `tag`.
  virtual Message receive_local(int source, int tag) = 0;
  virtual std::optional<Message> try_receive_local(int source, int tag) = 0;
  // The element-wise sum of `values` over every worker, in place
  // (Communicator::start_allreduce_sum on LOCAL, run by the thread that
  // owns LOCAL).
  virtual void allreduce_local(std::vector<float>& values) = 0;
};

}  // namespace cellgan
