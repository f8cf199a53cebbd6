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

namespace {

// The tensors of `group` in one flat tensor on their device, in order.
torch::Tensor pack(const std::vector<torch::Tensor>& tensors, const std::vector<std::size_t>& group) {
  std::vector<torch::Tensor> flat;
  for (std::size_t i : group) flat.push_back(tensors[i].view({-1}));
  return torch::cat(flat);
}

// The tensors of `group` overwritten from `summed`, pack()'s form.
void unpack(const std::vector<torch::Tensor>& tensors, const std::vector<std::size_t>& group,
            const torch::Tensor& summed) {
  std::int64_t offset = 0;
  torch::NoGradGuard no_grad;
  for (std::size_t i : group) {
    tensors[i].copy_(summed.narrow(0, offset, tensors[i].numel()).view(tensors[i].sizes()));
    offset += tensors[i].numel();
  }
}

}  // namespace

std::optional<Interruption> allreduce_fused(const std::vector<torch::Tensor>& tensors, std::int64_t fusion_bytes,
                                            GradientAllreduce& reduce) {
  std::vector<std::int64_t> numels;
  const torch::Device device = tensors.empty() ? torch::Device(torch::kCPU) : tensors.front().device();
  for (const torch::Tensor& t : tensors) {
    if (t.scalar_type() != torch::kFloat32 || !t.is_contiguous() || t.device() != device)
      throw std::logic_error("allreduce_fused: expected contiguous float32 tensors on one device");
    numels.push_back(t.numel());
  }
  const auto groups = fusion_groups(numels, fusion_bytes);
  std::vector<float> buffer;
  for (const auto& group : groups) {
    std::size_t total = 0;
    for (std::size_t i : group) total += static_cast<std::size_t>(numels[i]);
    if (!device.is_cpu() && reduce.sums_on_device()) {  // summed where the tensors are
      const torch::Tensor packed = pack(tensors, group);
      if (auto interruption = reduce.sum_on_device(packed.data_ptr<float>(), total)) return interruption;
      unpack(tensors, group, packed);
      continue;
    }
    buffer.resize(total);
    if (!device.is_cpu()) {
      // A GPU's tensors: packed on the device, staged through pinned host
      // memory (one copy each way), unpacked on the device.
      torch::Tensor staged = torch::empty({static_cast<std::int64_t>(total)},
                                          torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(true));
      staged.copy_(pack(tensors, group));
      std::memcpy(buffer.data(), staged.data_ptr<float>(), total * sizeof(float));
      if (auto interruption = reduce.sum(buffer)) return interruption;
      std::memcpy(staged.data_ptr<float>(), buffer.data(), total * sizeof(float));
      unpack(tensors, group, staged.to(device));
      continue;
    }
    std::size_t at = 0;
    for (std::size_t i : group) {
      std::memcpy(buffer.data() + at, tensors[i].data_ptr<float>(), static_cast<std::size_t>(numels[i]) * sizeof(float));
      at += static_cast<std::size_t>(numels[i]);
    }
    if (auto interruption = reduce.sum(buffer)) return interruption;
    at = 0;
    for (std::size_t i : group) {
      std::memcpy(tensors[i].data_ptr<float>(), buffer.data() + at, static_cast<std::size_t>(numels[i]) * sizeof(float));
      at += static_cast<std::size_t>(numels[i]);
    }
  }
  return std::nullopt;
}

}  // namespace cellgan
