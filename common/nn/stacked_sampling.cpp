// Many generators' samples in one stacked pass (stacked_sampling.h).
#include "common/nn/stacked_sampling.h"

#include <torch/torch.h>

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

#include "common/nn/conditional_networks.h"
#include "common/nn/ensemble.h"
#include "common/nn/initial_weights.h"
#include "common/nn/member_draws.h"
#include "common/nn/stacked_networks.h"

namespace cellgan {
namespace {

bool same_generator_shape(const NetworkShape& a, const NetworkShape& b) {
  return a.kind == b.kind && a.latent_dim == b.latent_dim && a.data_dim == b.data_dim &&
         a.toy_hidden == b.toy_hidden && a.toy_layers == b.toy_layers;
}

// The members `members` of `generators` (each drawing some rows) through one stack, into `out`.
void sample_pass(const std::vector<const Individual*>& generators, const std::vector<std::int64_t>& counts,
                 const std::vector<at::Generator>& streams, const std::vector<std::size_t>& members,
                 std::vector<torch::Tensor>& out) {
  const Individual& like = *generators[members.front()];
  const NetworkShape& shape = like.shape();
  std::int64_t longest = 0;
  std::vector<const Individual*> rows;
  for (std::size_t i : members) {
    longest = std::max(longest, counts[i]);
    rows.push_back(generators[i]);
  }
  const auto size = static_cast<std::int64_t>(members.size());
  StackedNetworkImpl stack(Role::kGenerator, shape, size, InitialWeights::kUndrawn);
  for (torch::Tensor& t : stack.parameters()) t.requires_grad_(false);
  stack.eval();  // as sample_mixture() runs each generator
  place_on_device(stack, like.device(), stack.drawn());
  load_weights(stack, rows);
  const torch::Tensor z = torch::zeros({size, longest, shape.latent_dim},
                                       torch::TensorOptions().dtype(torch::kFloat32).device(like.device()));
  for (std::int64_t p = 0; p < size; ++p) {
    const std::size_t i = members[static_cast<std::size_t>(p)];
    draw_normal_rows(z[p].narrow(0, 0, counts[i]).unsqueeze(0), {streams[i]});
  }
  const torch::Tensor made = stack.forward(z);  // [P, longest, data columns]
  for (std::int64_t p = 0; p < size; ++p) {
    const std::size_t i = members[static_cast<std::size_t>(p)];
    out[i] = image_part(made[p].narrow(0, 0, counts[i]), shape);
  }
}

}  // namespace

std::vector<torch::Tensor> sample_each_stacked(const std::vector<const Individual*>& generators,
                                               const std::vector<std::int64_t>& counts,
                                               const std::vector<at::Generator>& streams) {
  if (counts.size() != generators.size() || streams.size() != generators.size())
    throw std::invalid_argument(fmt::format("sample_each_stacked: {} generators, {} counts, {} streams",
                                            generators.size(), counts.size(), streams.size()));
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> out(generators.size());
  std::vector<std::size_t> pass;  // the members of the pass being filled
  std::int64_t longest = 0;
  for (std::size_t i = 0; i < generators.size(); ++i) {
    if (counts[i] <= 0) continue;
    const Individual& g = *generators[i];
    const Individual& first = *generators[pass.empty() ? i : pass.front()];
    if (g.role() != Role::kGenerator || !same_generator_shape(g.shape(), first.shape()) || g.device() != first.device())
      throw std::invalid_argument("sample_each_stacked: generators of one shape and device expected");
    if (counts[i] > kStackedSampleRows) {  // alone, a chunk of rows at a time
      std::vector<Individual*> one{const_cast<Individual*>(&g)};
      torch::Generator stream = streams[i];
      out[i] = sample_mixture(one, {1.0}, counts[i], stream);
      continue;
    }
    const std::int64_t wider = std::max(longest, counts[i]);
    if (!pass.empty() && wider * static_cast<std::int64_t>(pass.size() + 1) > kStackedSampleRows) {
      sample_pass(generators, counts, streams, pass, out);
      pass.clear();
      longest = 0;
    }
    pass.push_back(i);
    longest = std::max(longest, counts[i]);
  }
  if (!pass.empty()) sample_pass(generators, counts, streams, pass, out);
  return out;
}

}  // namespace cellgan
