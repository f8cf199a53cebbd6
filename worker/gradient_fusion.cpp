// Tensor fusion (see gradient_fusion.h).
#include "worker/gradient_fusion.h"

#include <torch/torch.h>

#include <cstring>
#include <stdexcept>

namespace cellgan {

std::vector<std::vector<std::size_t>> fusion_groups(const std::vector<std::int64_t>& numels,
                                                    std::int64_t fusion_bytes) {
  std::vector<std::vector<std::size_t>> groups;
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < numels.size(); ++i) {
    const std::int64_t size = numels[i] * static_cast<std::int64_t>(sizeof(float));
    if (groups.empty() || bytes + size > fusion_bytes) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(i);
    bytes += size;
  }
  return groups;
}

std::size_t allreduce_fused(const std::vector<torch::Tensor>& tensors, std::int64_t fusion_bytes,
                            GradientAllreduce& reduce) {
  std::vector<std::int64_t> numels;
  for (const torch::Tensor& t : tensors) {
    if (t.scalar_type() != torch::kFloat32 || !t.is_contiguous() || !t.device().is_cpu())
      throw std::logic_error("allreduce_fused: expected contiguous float32 CPU tensors");
    numels.push_back(t.numel());
  }
  const auto groups = fusion_groups(numels, fusion_bytes);
  std::vector<float> buffer;
  for (const auto& group : groups) {
    std::size_t total = 0;
    for (std::size_t i : group) total += static_cast<std::size_t>(numels[i]);
    buffer.resize(total);
    std::size_t at = 0;
    for (std::size_t i : group) {
      std::memcpy(buffer.data() + at, tensors[i].data_ptr<float>(), static_cast<std::size_t>(numels[i]) * sizeof(float));
      at += static_cast<std::size_t>(numels[i]);
    }
    reduce.sum(buffer);
    at = 0;
    for (std::size_t i : group) {
      std::memcpy(tensors[i].data_ptr<float>(), buffer.data() + at, static_cast<std::size_t>(numels[i]) * sizeof(float));
      at += static_cast<std::size_t>(numels[i]);
    }
  }
  return groups.size();
}

}  // namespace cellgan
