// The Communicator interface: point-to-point byte messages and the three
// collectives cellgan needs, behind which sit MPI (mpi_communicator.h) and
// an in-process implementation for unit tests (in_process_communicator.h).
//
// Contract:
// - Ranks are 0..size()-1 within this communicator.
// - send() never blocks: it queues the payload and starts the transfer.
//   Messages between one pair of ranks with one tag arrive in send order.
//   pending_sends() makes progress and says how many are still in flight.
// - try_receive() never blocks: it returns a matching message that has
//   arrived, or nothing.
// - gather(), barrier() and start_allreduce_sum() are collectives: every
//   member calls them, in the same order; subgroup() is collective over the
//   ranks it names alone. They have no deadline, and a collective that
//   includes a dead rank never ends (Open MPI), so the job's protocol
//   (protocol.h) uses none: only point-to-point messages, each wait with a
//   deadline. They wait by polling with short sleeps, not by spinning, so
//   waiting ranks leave the cores to ranks that train (docs/operations.md,
//   "Launching": ranks share cores).
//
// Thread-safety: a Communicator belongs to one thread (the thread that owns
// MPI in its process). Other threads reach it through that thread's queue.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"

namespace cellgan {

inline constexpr int kAnySource = -1;
inline constexpr int kAnyTag = -1;

struct Message {
  int source = -1;
  int tag = 0;
  Bytes payload;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual void send(int dest, int tag, Bytes payload) = 0;
  virtual std::optional<Message> try_receive(int source = kAnySource, int tag = kAnyTag) = 0;
  virtual std::size_t pending_sends() = 0;

  // Root receives every member's payload indexed by rank (its own
  // included); the others receive an empty vector.
  virtual std::vector<Bytes> gather(int root, const Bytes& payload) = 0;
  virtual void barrier() = 0;
  // Starts the element-wise float32 sum of `values` over every member, in
  // place (MPI_Iallreduce); every member passes the same length and gets
  // the same bits. `values` must stay where it is until done() has said
  // true. A sum with a dead member never completes: its caller must be
  // able to walk away from it (the worker's communication thread abandons
  // it when the survivors rehome). Used only by the data-parallel layout's
  // `allreduce: mpi`.
  class PendingSum {
   public:
    virtual ~PendingSum() = default;
    // Never blocks; true once `values` holds the sum.
    virtual bool done() = 0;
  };
  virtual std::unique_ptr<PendingSum> start_allreduce_sum(std::vector<float>& values) = 0;
  // A communicator of `ranks` (strictly ascending ranks of this one, the
  // caller's among them), its ranks in that order. Called by exactly those
  // ranks, with the same `tag` (which tells concurrent creations apart);
  // the others go on. MPI's (MPI_Comm_create_group) waits for every one of
  // them, a lost one too, so callers enter it only after each has shown it
  // is alive; the in-process one returns at once. std::invalid_argument for
  // bad ranks or a negative tag; std::logic_error from an MPI communicator
  // made without a twin to make them on (mpi_communicator.h: only LOCAL
  // has one).
  virtual std::unique_ptr<Communicator> subgroup(const std::vector<int>& ranks, int tag) = 0;
};

// start_allreduce_sum() waited for by polling with short sleeps (no
// deadline, like every collective).
void allreduce_sum(Communicator& comm, std::vector<float>& values);

// Waiting has a deadline everywhere in cellgan: a peer that has died is
// never reported by Open MPI (docs/architecture.md), so a wait without one
// could last forever. A deadline that passes is an expected ending (the
// peer may be gone), returned as a value: the helpers below return none.

// Blocks (polling with short sleeps) until a matching message arrives, for
// at most `timeout`: the message, or none when the time is up.
std::optional<Message> receive_blocking(Communicator& comm, int source, int tag, std::chrono::milliseconds timeout);
// The line that says receive_blocking() found nothing: "no message from
// rank 0 with tag any within 30000 ms".
std::string missed_deadline(int source, int tag, std::chrono::milliseconds timeout);

// Blocks (polling) until every queued send has completed, for at most
// `timeout`; returns false if some are still in flight then.
bool flush_sends(Communicator& comm, std::chrono::milliseconds timeout);

}  // namespace cellgan
