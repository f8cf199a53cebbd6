// fp16's dynamic loss scale (loss_scaler.h) for P stacked members at once:
// each member has a scale of its own, so that one member's overflow skips
// that member's step only and a cell's result does not depend on the other
// members of its stack. scaled() sums the members' losses, each times its
// scale, for one backward pass; unscale() divides each member's rows of
// the gradients by its scale and says which members' gradients are all
// finite (the row mask for BatchedAdam::step); update() halves the scales
// of the others and counts their skips. A stack lives one generation, and
// so do its scales: each starts at `initial` again.
//
// Thread-safety: belongs to one trainer's thread.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace cellgan {

class StackedLossScaler {
 public:
  StackedLossScaler(std::int64_t members, const torch::Device& device, double initial = 65536.0);

  // Σ_p per_member[p] · scale[p] (per_member: [P]).
  torch::Tensor scaled(const torch::Tensor& per_member) const;
  // Each [P, ...] gradient's member rows divided by that member's scale, in
  // place; bool [P]: the members whose gradients are all finite.
  torch::Tensor unscale(const std::vector<torch::Tensor>& gradients) const;
  // Halves the scale of the members `finite` (bool [P]) leaves out.
  void update(const torch::Tensor& finite);

  // Steps skipped per member (read from the device).
  std::vector<std::int64_t> skipped() const;
  // [P] float32 on the device: each member's scale now.
  const torch::Tensor& scales() const { return scale_; }

 private:
  torch::Tensor scale_;    // [P] float32
  torch::Tensor skipped_;  // [P] int64
};

}  // namespace cellgan
