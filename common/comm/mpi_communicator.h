// PRIVATE to cellgan_comm: the MPI implementation of Communicator. It
// includes <mpi.h>, so only the .cpp files of common/comm/ may include it;
// everyone else gets an MpiCommunicator through MpiSession as a
// std::unique_ptr<Communicator>.
//
// - send(): MPI_Isend of a payload that the communicator keeps alive until
//   the request completes; pending_sends() tests the requests and drops the
//   completed ones.
// - try_receive(): MPI_Improbe, then MPI_Imrecv (MPI_BYTE) into a buffer
//   of the message's size; it never blocks. A matched message that has not
//   fully arrived (a peer that hangs or dies mid-message) is kept and
//   tested again by later calls, and until it completes no later message
//   from the same source is taken, so each source's messages keep their
//   order. The other sources' messages are taken meanwhile: a peer that died
//   mid-message (Open MPI never reports it) must not silence the live ones.
//   The caller's deadline (heartbeats) decides when a peer is gone.
// - gather(): MPI_Igather of the sizes, then MPI_Igatherv of the bytes;
//   barrier(): MPI_Ibarrier. Both wait by polling MPI_Test with short
//   sleeps, so a waiting rank leaves the core to ranks that train.
// - start_allreduce_sum(): MPI_Iallreduce (MPI_FLOAT, MPI_SUM, in place);
//   done() is MPI_Test. A sum dropped before it is done is left to MPI
//   (its request is not freed: MPI forbids freeing an active collective).
// - subgroup(): MPI_Comm_create_group over the listed ranks
//   (create_group_of, below), made on the communicator's twin: one of the
//   same ranks in the same order that carries nothing else. Open MPI's
//   MPI_Comm_create_group sends point-to-point messages with the given tag
//   over its parent, where a receive of any source and tag (the worker's
//   polling of LOCAL) would take them and the creation would never end.
//   Only a communicator made with a twin (MpiSession::cartesian) has
//   subgroups; the others throw std::logic_error.
// - The wrapped communicator's error handler is MPI_ERRORS_RETURN; a failed
//   MPI call throws std::runtime_error naming the MPI function.
// - The destructor frees an owned communicator (never MPI_COMM_WORLD). Sends
//   still in flight then are released with MPI_Request_free and their
//   payloads deliberately leaked, since MPI may still read them; call
//   flush_sends() first to avoid that.
//
// Thread-safety: like every Communicator, an instance belongs to one thread.
// Two threads must never receive on the same MPI_Comm.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "common/comm/communicator.h"

namespace cellgan {

// Throws std::runtime_error("<function> failed: <MPI error string>") unless
// `code` is MPI_SUCCESS.
void check_mpi(int code, const char* function);

// Polls MPI_Test on `request` with short sleeps until it completes.
// `function` names the call that started it, for the error message.
void wait_polling(MPI_Request& request, const char* function);

// A new communicator of `ranks` (strictly ascending ranks of `parent`, the
// caller's among them), in that order: MPI_Comm_create_group, called by
// exactly those ranks with the same `tag`. It waits for every one of them;
// past kCreateLimit (exit_unless_done.h) the process exits 75.
// std::invalid_argument for bad ranks or a negative tag.
MPI_Comm create_group_of(MPI_Comm parent, const std::vector<int>& ranks, int tag);

class MpiCommunicator final : public Communicator {
 public:
  // Wraps `comm`. If `owned`, MPI_Comm_free is called on destruction (never
  // for MPI_COMM_WORLD). `twin`, if not MPI_COMM_NULL, is owned too: a
  // communicator of the same ranks in the same order, used for subgroup()
  // alone. REQUIRES: comm != MPI_COMM_NULL.
  MpiCommunicator(MPI_Comm comm, bool owned, MPI_Comm twin = MPI_COMM_NULL);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void send(int dest, int tag, Bytes payload) override;
  std::optional<Message> try_receive(int source = kAnySource, int tag = kAnyTag) override;
  std::size_t pending_sends() override;

  std::vector<Bytes> gather(int root, const Bytes& payload) override;
  void barrier() override;
  std::unique_ptr<PendingSum> start_allreduce_sum(std::vector<float>& values) override;
  std::unique_ptr<Communicator> subgroup(const std::vector<int>& ranks, int tag) override;

 private:
  MPI_Comm comm_;
  bool owned_;
  MPI_Comm twin_;
  int rank_ = 0;
  int size_ = 0;
  // Parallel arrays: requests_[i] reads payloads_[i]. Moving a Bytes keeps
  // its heap buffer, so growing payloads_ never moves bytes MPI reads.
  std::vector<MPI_Request> requests_;
  std::vector<Bytes> payloads_;
  // Receives matched (MPI_Improbe) and still arriving, oldest first. The
  // payload's heap buffer stays put when the vector grows.
  struct Arriving {
    MPI_Request request;
    Message message;
  };
  std::vector<Arriving> arriving_;
};

}  // namespace cellgan
