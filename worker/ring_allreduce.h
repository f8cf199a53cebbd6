// The ring all-reduce (gradient_allreduce.h), over point-to-point messages
// to the right-hand worker (r + 1 mod W) and from the left-hand one.
//
// The buffer of n values is cut into W chunks, chunk c = [n·c/W, n·(c+1)/W).
//  1. Reduce-scatter, W − 1 steps: at step k worker r sends its partial sum
//     of chunk (r − k) mod W to the right and adds the left's chunk
//     (r − k − 1) mod W into its own, in float32. Afterwards worker r holds
//     the full sum of chunk (r + 1) mod W, rounded there to the wire's
//     precision.
//  2. All-gather, W − 1 steps: at step k worker r sends chunk (r + 1 − k)
//     mod W to the right and stores the left's chunk (r − k) mod W.
// Every worker sends 2(W−1) messages of about n/W values: 2(W−1)/W of the
// buffer's wire bytes, whatever W (the ring's cost model).
//
// Thread-safety: as gradient_allreduce.h.
#pragma once

#include "worker/gradient_allreduce.h"

namespace cellgan {

class RingAllreduce final : public GradientAllreduce {
 public:
  RingAllreduce(WorkerExchange& exchange, WireCompression compression)
      : exchange_(exchange), compression_(compression) {}
  [[nodiscard]] std::optional<Interruption> sum(std::vector<float>& values) override;
  // Step 1 alone: this worker's chunk (r + 1) mod W summed and rounded.
  [[nodiscard]] std::optional<Interruption> reduce_scatter(std::vector<float>& values) override;
  WorkerExchange& exchange() override { return exchange_; }

 private:
  WorkerExchange& exchange_;
  WireCompression compression_;
};

}  // namespace cellgan
