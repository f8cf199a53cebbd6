// The single-reducer all-reduce (see reduce_broadcast_allreduce.h).
#include "worker/reduce_broadcast_allreduce.h"

#include "common/comm/protocol.h"
#include "worker/wire_precision.h"

namespace cellgan {
namespace {
constexpr int kReducer = 0;
}  // namespace

std::optional<Interruption> ReduceBroadcastAllreduce::sum(std::vector<float>& values) {
  const int w = exchange_.local_size();
  if (w == 1) return std::nullopt;
  const std::size_t n = values.size();
  const auto send = [&](int dest) { send_wire(exchange_, dest, compression_, values.data(), n, tally_); };
  if (exchange_.local_rank() != kReducer) {
    send(kReducer);
    Waited<Message> sum = exchange_.receive_local(kReducer, kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&sum)) return std::move(*interruption);
    decode_wire(compression_, std::get<Message>(sum).payload, values.data(), n);
    return std::nullopt;
  }
  for (int source = 1; source < w; ++source) {
    Waited<Message> part = exchange_.receive_local(source, kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&part)) return std::move(*interruption);
    add_wire(compression_, std::get<Message>(part).payload, values.data(), n);
  }
  round_to_wire(compression_, values.data(), n);
  for (int dest = 1; dest < w; ++dest) send(dest);
  return std::nullopt;
}

}  // namespace cellgan
