// The ring all-reduce (see ring_allreduce.h), and the ring all-gather of
// gradient_allreduce.h.
#include "worker/ring_allreduce.h"

#include "common/comm/protocol.h"
#include "worker/wire_precision.h"

namespace cellgan {
namespace {

int wrap(int i, int w) { return ((i % w) + w) % w; }

// Phase 2 of the ring: worker r holds chunk (r + 1) mod W; at step k it
// sends chunk (r + 1 − k) mod W to the right and stores the left's chunk
// (r − k) mod W.
std::optional<Interruption> gather_chunks(WorkerExchange& exchange, WireCompression compression,
                                          std::vector<float>& values, AllreduceTally& tally) {
  const int w = exchange.local_size();
  const int r = exchange.local_rank();
  const std::size_t n = values.size();
  for (int step = 0; step < w - 1; ++step) {
    const Shard out = chunk_of(n, w, wrap(r + 1 - step, w));
    send_wire(exchange, wrap(r + 1, w), compression, values.data() + out.first, out.count, tally);
    const Shard in = chunk_of(n, w, wrap(r - step, w));
    Waited<Message> message = exchange.receive_local(wrap(r - 1, w), kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&message)) return std::move(*interruption);
    decode_wire(compression, std::get<Message>(message).payload, values.data() + in.first, in.count);
  }
  return std::nullopt;
}

}  // namespace

Shard chunk_of(std::size_t n, int workers, int c) {
  const auto w = static_cast<std::size_t>(workers);
  const auto i = static_cast<std::size_t>(c);
  const std::size_t first = n * i / w;
  return {first, n * (i + 1) / w - first};
}

Shard own_shard(std::size_t n, int rank, int workers) { return chunk_of(n, workers, wrap(rank + 1, workers)); }

std::optional<Interruption> all_gather(WorkerExchange& exchange, std::vector<float>& values, AllreduceTally& tally) {
  if (exchange.local_size() == 1) return std::nullopt;
  return gather_chunks(exchange, WireCompression::kNone, values, tally);
}

std::optional<Interruption> RingAllreduce::reduce_scatter(std::vector<float>& values) {
  const int w = exchange_.local_size();
  if (w == 1) return std::nullopt;
  const int r = exchange_.local_rank();
  const std::size_t n = values.size();
  for (int step = 0; step < w - 1; ++step) {
    const Shard out = chunk_of(n, w, wrap(r - step, w));
    send_wire(exchange_, wrap(r + 1, w), compression_, values.data() + out.first, out.count, tally_);
    const Shard in = chunk_of(n, w, wrap(r - step - 1, w));
    Waited<Message> message = exchange_.receive_local(wrap(r - 1, w), kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&message)) return std::move(*interruption);
    add_wire(compression_, std::get<Message>(message).payload, values.data() + in.first, in.count);
  }
  const Shard own = own_shard(n, r, w);
  round_to_wire(compression_, values.data() + own.first, own.count);
  return std::nullopt;
}

std::optional<Interruption> RingAllreduce::sum(std::vector<float>& values) {
  if (exchange_.local_size() == 1) return std::nullopt;
  if (auto interruption = reduce_scatter(values)) return interruption;
  return gather_chunks(exchange_, compression_, values, tally_);
}

}  // namespace cellgan
