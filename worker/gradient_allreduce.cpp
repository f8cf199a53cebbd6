// Choosing an all-reduce (see gradient_allreduce.h); the MPI one is here,
// being a single call.
#include "worker/gradient_allreduce.h"

#include <stdexcept>

#include "common/comm/protocol.h"
#include "worker/reduce_broadcast_allreduce.h"
#include "worker/ring_allreduce.h"
#include "worker/wire_precision.h"

namespace cellgan {
namespace {

class MpiAllreduce final : public GradientAllreduce {
 public:
  explicit MpiAllreduce(WorkerExchange& exchange) : exchange_(exchange) {}
  std::optional<Interruption> sum(std::vector<float>& values) override {
    if (exchange_.local_size() == 1) return std::nullopt;
    tally_opaque_sum(values.size());
    return exchange_.allreduce_local(values);
  }
  WorkerExchange& exchange() override { return exchange_; }

 private:
  WorkerExchange& exchange_;
};

}  // namespace

void GradientAllreduce::tally_opaque_sum(std::size_t count) {
  const auto w = static_cast<std::uint64_t>(exchange().local_size());
  ++tally_.messages;
  tally_.bytes_sent += 2 * (count * sizeof(float)) * (w - 1) / w;
}

std::optional<Interruption> GradientAllreduce::sum_by(GradientAllreduce& inner, std::vector<float>& values) {
  const AllreduceTally before = inner.tally();
  if (auto interruption = inner.sum(values)) return interruption;
  tally_.bytes_sent += inner.tally().bytes_sent - before.bytes_sent;
  tally_.messages += inner.tally().messages - before.messages;
  return std::nullopt;
}

std::optional<Interruption> GradientAllreduce::sum_on_device(float* /*values*/, std::size_t /*count*/) {
  throw std::logic_error("this all-reduce sums host buffers only");
}

void send_wire(WorkerExchange& exchange, int dest, WireCompression compression, const float* values,
               std::size_t count, AllreduceTally& tally) {
  Bytes payload = encode_wire(compression, values, count);
  tally.bytes_sent += payload.size();
  ++tally.messages;
  exchange.send_local(dest, kTagGradients, std::move(payload));
}

std::unique_ptr<GradientAllreduce> make_gradient_allreduce(AllreduceKind kind, WireCompression compression,
                                                           WorkerExchange& exchange) {
  switch (kind) {
    case AllreduceKind::kRing: return std::make_unique<RingAllreduce>(exchange, compression);
    case AllreduceKind::kReduceBroadcast: return std::make_unique<ReduceBroadcastAllreduce>(exchange, compression);
    case AllreduceKind::kMpi:
      if (compression != WireCompression::kNone)
        throw std::logic_error("allreduce mpi sums float32 only: no compression");
      return std::make_unique<MpiAllreduce>(exchange);
    case AllreduceKind::kNccl: throw std::logic_error("allreduce nccl is joined (join_nccl), not made");
  }
  throw std::logic_error("unknown allreduce");
}

}  // namespace cellgan
