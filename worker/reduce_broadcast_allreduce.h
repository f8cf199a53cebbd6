// The single-reducer all-reduce (gradient_allreduce.h; seed 001's
// reduce-then-broadcast): every worker but worker 0 sends its whole buffer
// to worker 0, which adds them to its own in worker order (1, 2, ...),
// rounds the sum to the wire's precision and sends it to each of them.
// Worker 0 sends (W−1)·n values and the others n each: the reducer's link
// carries everything, which is why it scales worse than the ring.
//
// Thread-safety: as gradient_allreduce.h.
#pragma once

#include "worker/gradient_allreduce.h"

namespace cellgan {

class ReduceBroadcastAllreduce final : public GradientAllreduce {
 public:
  ReduceBroadcastAllreduce(WorkerExchange& exchange, WireCompression compression)
      : exchange_(exchange), compression_(compression) {}
  [[nodiscard]] std::optional<Interruption> sum(std::vector<float>& values) override;
  WorkerExchange& exchange() override { return exchange_; }

 private:
  WorkerExchange& exchange_;
  WireCompression compression_;
};

}  // namespace cellgan
