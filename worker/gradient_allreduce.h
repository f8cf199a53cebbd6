// Summing one buffer of float32 values over every worker of LOCAL, in
// place (the data-parallel layout's all-reduce; configuration keys
// data_parallel.allreduce and .compression). Three algorithms behind one
// small interface (Flashlight's Reducer):
//
// - ring (ring_allreduce.h): reduce-scatter, then all-gather, over
//   point-to-point messages (kTagGradients); each worker sends 2(W−1)
//   messages of about n/W values.
// - reduce_broadcast (reduce_broadcast_allreduce.h): every worker sends its
//   buffer to worker 0, which sums in worker order and sends the sum back
//   (seed 001's single reducer).
// - mpi: WorkerExchange::allreduce_local(), i.e. MPI_Iallreduce on LOCAL
//   run by the communication thread, the reference. No compression. Its
//   tally counts one message per sum and the ring's bytes, 2(W−1)/W of the
//   buffer (what MPI really sends is not visible here).
// - nccl (nccl_allreduce.h): ncclAllReduce on the workers' GPUs, summing
//   the buffers where they are; joined with join_nccl(), not made here.
//
// Contract: every worker calls sum() with buffers of the same length, in
// the same order, and afterwards holds the very same bits as every other
// worker (the sum is computed once per element and then copied, rounded to
// the wire's precision first when compression is on). With W = 1 the buffer
// is left as it is. Messages of one call arrive before those of the next
// (one tag, in order, WorkerExchange).
//
// Thread-safety: belongs to the worker's training thread, like the
// WorkerExchange it uses.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/config.h"
#include "worker/worker_exchange.h"

namespace cellgan {

// What the all-reduces of this worker have cost so far.
struct AllreduceTally {
  std::uint64_t bytes_sent = 0;  // payload bytes this worker sent
  std::uint64_t messages = 0;    // messages (or MPI calls) this worker started
};

class GradientAllreduce {
 public:
  virtual ~GradientAllreduce() = default;
  // Replaces `values` by their element-wise sum over every worker: none
  // then, else the interruption that came first (worker_exchange.h), with
  // `values` unspecified.
  [[nodiscard]] virtual std::optional<Interruption> sum(std::vector<float>& values) = 0;
  // For a sharded optimizer (data_parallel.shard_optimizer): afterwards
  // this worker's shard of `values` (own_shard) holds its sum over every
  // worker, with the very bits sum() would give it; the rest is
  // unspecified. The ring stops after its reduce-scatter; the others sum
  // the whole buffer.
  [[nodiscard]] virtual std::optional<Interruption> reduce_scatter(std::vector<float>& values) { return sum(values); }
  // Whether sum_on_device() takes buffers in a GPU's memory (nccl):
  // allreduce_fused() then packs and sums GPU tensors on the device.
  virtual bool sums_on_device() const { return false; }
  // As sum(), for `count` float32 values at `values` in the memory of this
  // worker's GPU. Only where sums_on_device(); std::logic_error elsewhere.
  [[nodiscard]] virtual std::optional<Interruption> sum_on_device(float* values, std::size_t count);
  // The exchange of LOCAL the sums travel on.
  virtual WorkerExchange& exchange() = 0;
  const AllreduceTally& tally() const { return tally_; }
  AllreduceTally& tally() { return tally_; }

 protected:
  // One sum of `count` float32 values by a library whose messages are not
  // visible here (mpi, nccl), in the tally: one message, and the bytes a
  // ring would send per worker, 2(W−1)/W of the buffer.
  void tally_opaque_sum(std::size_t count);
  // `values` summed by `inner`, an all-reduce among some of the workers
  // (the two-level ones' leaders), and what that sent added to this
  // tally once done. None then, else the interruption.
  [[nodiscard]] std::optional<Interruption> sum_by(GradientAllreduce& inner, std::vector<float>& values);

  AllreduceTally tally_;
};

// Worker `rank`'s shard of a buffer of n values among `workers`: chunk
// (rank + 1) mod W of the W chunks [n·c/W, n·(c+1)/W), the one a ring
// worker holds summed after its reduce-scatter (ring_allreduce.h).
struct Shard {
  std::size_t first = 0;
  std::size_t count = 0;
};
Shard chunk_of(std::size_t n, int workers, int c);
Shard own_shard(std::size_t n, int rank, int workers);

// Sends `count` values from `values` to worker `dest` in the wire form of
// `compression` (kTagGradients), counted in `tally`: the one send of every
// all-reduce.
void send_wire(WorkerExchange& exchange, int dest, WireCompression compression, const float* values,
               std::size_t count, AllreduceTally& tally);

// Every worker's own shard of `values` to every worker, float32 as it is,
// over a ring of `exchange` (W − 1 messages each, kTagGradients); counted in
// `tally`. A collective. None once done, else the interruption.
[[nodiscard]] std::optional<Interruption> all_gather(WorkerExchange& exchange, std::vector<float>& values,
                                                     AllreduceTally& tally);

// The algorithm `kind` over `exchange` (which must outlive it), values on
// the wire as `compression` says. std::logic_error for mpi with compression
// (the configuration rejects it first).
std::unique_ptr<GradientAllreduce> make_gradient_allreduce(AllreduceKind kind, WireCompression compression,
                                                           WorkerExchange& exchange);

}  // namespace cellgan
