// The ring all-reduce (see ring_allreduce.h).
#include "worker/ring_allreduce.h"

#include "common/comm/protocol.h"
#include "worker/wire_precision.h"

namespace cellgan {
namespace {

// Chunk c of W over n values: [first, first + count).
struct Chunk {
  std::size_t first = 0;
  std::size_t count = 0;
};

Chunk chunk(std::size_t n, int workers, int c) {
  const auto w = static_cast<std::size_t>(workers);
  const auto i = static_cast<std::size_t>(c);
  const std::size_t first = n * i / w;
  return {first, n * (i + 1) / w - first};
}

int wrap(int i, int w) { return ((i % w) + w) % w; }

}  // namespace

std::optional<Interruption> RingAllreduce::sum(std::vector<float>& values) {
  const int w = exchange_.local_size();
  if (w == 1) return std::nullopt;
  const int r = exchange_.local_rank();
  const int right = wrap(r + 1, w);
  const int left = wrap(r - 1, w);
  const std::size_t n = values.size();
  const auto send = [&](int c) {
    const Chunk k = chunk(n, w, c);
    Bytes payload = encode_wire(compression_, values.data() + k.first, k.count);
    tally_.bytes_sent += payload.size();
    ++tally_.messages;
    exchange_.send_local(right, kTagGradients, std::move(payload));
  };
  // 1. Reduce-scatter.
  for (int step = 0; step < w - 1; ++step) {
    send(wrap(r - step, w));
    const Chunk k = chunk(n, w, wrap(r - step - 1, w));
    Waited<Message> in = exchange_.receive_local(left, kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&in)) return std::move(*interruption);
    add_wire(compression_, std::get<Message>(in).payload, values.data() + k.first, k.count);
  }
  const Chunk own = chunk(n, w, wrap(r + 1, w));
  round_to_wire(compression_, values.data() + own.first, own.count);
  // 2. All-gather.
  for (int step = 0; step < w - 1; ++step) {
    send(wrap(r + 1 - step, w));
    const Chunk k = chunk(n, w, wrap(r - step, w));
    Waited<Message> in = exchange_.receive_local(left, kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&in)) return std::move(*interruption);
    decode_wire(compression_, std::get<Message>(in).payload, values.data() + k.first, k.count);
  }
  return std::nullopt;
}

}  // namespace cellgan
