// Groups of tensors reduced by size (grouped_reduction.h).
#include "common/nn/grouped_reduction.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>

namespace cellgan {

torch::Tensor reduce_groups_by_size(const std::vector<std::vector<torch::Tensor>>& groups,
                                    const std::function<torch::Tensor(const torch::Tensor&)>& reduce_rows) {
  if (groups.empty()) throw std::invalid_argument("reduce_groups_by_size: no group");
  torch::NoGradGuard no_grad;
  std::map<std::int64_t, std::vector<std::size_t>> by_size;  // total size -> the groups of it, in order
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) throw std::invalid_argument("reduce_groups_by_size: an empty group");
    std::int64_t size = 0;
    for (const torch::Tensor& t : groups[g]) size += t.numel();
    by_size[size].push_back(g);
  }
  std::vector<torch::Tensor> values;  // per size, [its groups]
  std::vector<std::size_t> order;     // the group of each value, sizes in turn
  for (const auto& [size, members] : by_size) {
    const auto most_rows = static_cast<std::size_t>(std::max<std::int64_t>(1, kMostGroupedValues / size));
    for (std::size_t first = 0; first < members.size(); first += most_rows) {
      const std::size_t end = std::min(members.size(), first + most_rows);
      std::vector<torch::Tensor> flat;
      for (std::size_t k = first; k < end; ++k)
        for (const torch::Tensor& t : groups[members[k]]) flat.push_back(t.reshape(-1));
      values.push_back(reduce_rows(torch::cat(flat).view({static_cast<std::int64_t>(end - first), size})));
      order.insert(order.end(), members.begin() + static_cast<std::ptrdiff_t>(first),
                   members.begin() + static_cast<std::ptrdiff_t>(end));
    }
  }
  const torch::Tensor host = torch::cat(values).to(torch::kCPU).contiguous();
  std::vector<std::int64_t> position(groups.size());
  for (std::size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<std::int64_t>(k);
  return host.index_select(0, torch::tensor(position, torch::kLong));
}

}  // namespace cellgan
