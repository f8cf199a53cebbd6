// What a layout (worker_layout.h) may do with the other workers: send a
// message to a worker and receive the next one from a worker, over LOCAL,
// and sum floats over every worker with LOCAL's start_allreduce_sum().
// The worker's communication thread (worker_comm.h) carries them.
//
// Contract:
// - Workers are LOCAL ranks 0..local_size()-1 (world rank = LOCAL rank + 1
//   for a full set of workers).
// - Messages from one worker with one tag arrive in send order.
// - Every wait returns what happened: what it waited for, or the
//   Interruption that came first (Waited, below): the run has ended (the
//   master aborts it, or has been silent for runtime.dead_after_ms), or the
//   master asks the survivors of a lost worker to go on without it. No wait
//   lasts forever, and none ends by an exception: a caller that meets an
//   interruption stops what it does and returns it, up to the training
//   loop (worker.cpp), which ends or rehomes.
// - allreduce_local() is a collective: every worker calls it with the same
//   length, in the same order. It waits like receive_local(), but a sum
//   with a dead rank never completes (docs/architecture.md), so only the
//   data-parallel layout's `allreduce: mpi` uses it.
// - allreduce_among() is the same sum over some workers only (the leaders
//   of a two-level all-reduce, two_level_allreduce.h): a collective of the
//   workers it names, which alone call it. The first call for a set of
//   workers makes their communicator (Communicator::subgroup), kept until
//   LOCAL changes.
// - receive_local() waits until the message has arrived.
// - try_receive_local() never blocks: the next message from `source` with
//   `tag` if one has arrived, else none; or the interruption, as
//   receive_local() would return it.
//
// Thread-safety: called from the training thread only.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/comm/communicator.h"
#include "common/comm/protocol.h"
#include "common/error.h"

namespace cellgan {

// The run ended while this worker waited: exit_code is the code every
// rank exits with (common/error.h), reason the master's (or this rank's)
// words for it.
struct Aborted {
  int exit_code = kExitFailure;
  std::string reason;
};

// The master has told the survivors of a lost worker to go on without it,
// from members.generation (kTagRehome, protocol.h).
struct Rehoming {
  MembersMessage members;
};

// Why a wait of the training thread ended without what it waited for.
using Interruption = std::variant<Aborted, Rehoming>;

// What a wait brought: what it waited for (T), or the interruption.
template <class T>
using Waited = std::variant<T, Interruption>;

class WorkerExchange {
 public:
  virtual ~WorkerExchange() = default;
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  // Queues `payload` for worker `dest`; never blocks.
  virtual void send_local(int dest, int tag, Bytes payload) = 0;
  // The next message from worker `source` with `tag`.
  [[nodiscard]] virtual Waited<Message> receive_local(int source, int tag) = 0;
  [[nodiscard]] virtual Waited<std::optional<Message>> try_receive_local(int source, int tag) = 0;
  // The element-wise sum of `values` over every worker, in place
  // (Communicator::start_allreduce_sum on LOCAL, run by the thread that
  // owns LOCAL); none once done, else the interruption (`values` is then
  // unspecified).
  [[nodiscard]] virtual std::optional<Interruption> allreduce_local(std::vector<float>& values) = 0;
  // As allreduce_local(), over the workers `ranks` alone (strictly
  // ascending LOCAL ranks, this worker's among them): every one of them
  // calls it with the same ranks and length, in the same order.
  [[nodiscard]] virtual std::optional<Interruption> allreduce_among(const std::vector<int>& ranks,
                                                                    std::vector<float>& values) = 0;
  // Never blocks: the interruption a wait would return now (a rehoming is
  // then taken, as a wait takes it), or none. For waits on something else
  // than the exchange (a GPU's collective, nccl_allreduce.h).
  [[nodiscard]] virtual std::optional<Interruption> interrupted() = 0;
};

}  // namespace cellgan
