// The fitness game on stacked networks (see pair_game.h).
#include "worker/pair_game.h"

#include <torch/torch.h>

#include <algorithm>

#include "common/nn/device.h"
#include "common/nn/losses.h"
#include "common/nn/stacked_losses.h"
#include "common/nn/stacked_networks.h"
#include "worker/generation_steps.h"

namespace cellgan {
namespace {

// Row p of `stack` takes the individual's weights and buffers (not its Adam
// state, which the game does not use).
void load_weights(StackedNetworkImpl& stack, std::int64_t p, Individual& individual) {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> params = individual.module().parameters();
  const std::vector<torch::Tensor> buffers = individual.module().buffers();
  const std::vector<StackedTensor> rows = stack.parameter_tensors();
  const std::vector<StackedTensor> buffer_rows = stack.buffer_tensors();
  for (std::size_t i = 0; i < rows.size(); ++i) set_member_row(rows[i], rows[i].stacked, p, params[i]);
  for (std::size_t i = 0; i < buffer_rows.size(); ++i)
    set_member_row(buffer_rows[i], buffer_rows[i].stacked, p, buffers[i]);
}

// Every pair's losses from the discriminators' outputs on the fakes
// (`d_fake` [ND, NG * F, 1]) and on the real batch (`d_real` [ND, F, 1]),
// taken per pair with the generator's loss kind and read in one copy; each
// generator's fitness is then its mean over the discriminators, and the
// reverse, summed in the order the pairs were played.
void set_fitness(const std::vector<Individual*>& generators, const std::vector<Individual*>& discriminators,
                 const torch::Tensor& d_fake, const torch::Tensor& d_real, BceForm bce) {
  const auto ng = static_cast<std::int64_t>(generators.size());
  const auto nd = static_cast<std::int64_t>(discriminators.size());
  // Pair (i, j) is row i * ND + j: G i's fakes through D j.
  const std::int64_t rows = d_real.size(1);
  const torch::Tensor pair_fake = d_fake.view({nd, ng, rows, -1}).transpose(0, 1).reshape({ng * nd, rows, -1});
  const torch::Tensor pair_real = d_real.unsqueeze(0).expand({ng, nd, rows, -1}).reshape({ng * nd, rows, -1});
  std::vector<LossKind> kinds;
  for (const Individual* g : generators)
    for (std::int64_t j = 0; j < nd; ++j) kinds.push_back(g->loss);
  const torch::Tensor g_losses =
      losses_by_kind(kinds, d_real.device(), [&](LossKind k, const torch::Tensor& at) {
        return generator_loss(k, rows_of(pair_fake, at), bce, LossMean::kPerMember);
      }).per_member;
  const torch::Tensor d_losses =
      losses_by_kind(kinds, d_real.device(), [&](LossKind k, const torch::Tensor& at) {
        return discriminator_loss(discriminator_loss_for(k), rows_of(pair_real, at), rows_of(pair_fake, at), bce,
                                  LossMean::kPerMember);
      }).per_member;
  const torch::Tensor host = torch::stack({g_losses, d_losses}).to(torch::kCPU, torch::kFloat64);
  const auto value = host.accessor<double, 2>();
  std::vector<double> d_total(discriminators.size(), 0.0);
  for (std::int64_t i = 0; i < ng; ++i) {
    double g_total = 0.0;
    for (std::int64_t j = 0; j < nd; ++j) {
      g_total += value[0][i * nd + j];
      d_total[static_cast<std::size_t>(j)] += value[1][i * nd + j];
    }
    generators[static_cast<std::size_t>(i)]->fitness = g_total / static_cast<double>(nd);
  }
  for (std::int64_t j = 0; j < nd; ++j)
    discriminators[static_cast<std::size_t>(j)]->fitness = d_total[static_cast<std::size_t>(j)] / static_cast<double>(ng);
}

}  // namespace

PairGame::PairGame() = default;
PairGame::~PairGame() = default;

StackedNetworkImpl& PairGame::stack_of(const Individual& like, std::int64_t members) {
  std::shared_ptr<StackedNetworkImpl>& stack = stacks_[{like.role(), members}];
  if (!stack) {
    torch::NoGradGuard no_grad;
    stack = std::make_shared<StackedNetworkImpl>(like.role(), like.shape(), members);
    for (torch::Tensor& t : stack->parameters()) t.requires_grad_(false);
    stack->eval();  // as the game plays the individuals: running statistics, no dropout
  }
  if (!(stack->parameters().front().device() == like.device())) stack->to(like.device());
  return *stack;
}

void PairGame::play(const std::vector<Individual*>& generators, const std::vector<Individual*>& discriminators,
                    const torch::Tensor& real, const torch::Tensor& z, BceForm bce, PlayedOutputs* reuse) {
  if (generators.empty() || discriminators.empty() || !is_stacked(generators.front()->shape().kind)) {
    play_one_pair_at_a_time(generators, discriminators, real, z, bce, reuse);
    return;
  }
  torch::NoGradGuard no_grad;
  const auto ng = static_cast<std::int64_t>(generators.size());
  const auto nd = static_cast<std::int64_t>(discriminators.size());
  // Every generator's fakes, from `reuse` where it has them.
  std::vector<torch::Tensor> fakes(generators.size());
  std::vector<std::int64_t> missing;
  for (std::int64_t i = 0; i < ng; ++i) {
    const auto known = reuse ? reuse->fakes.find(generators[i]) : decltype(reuse->fakes.end()){};
    if (reuse && known != reuse->fakes.end())
      fakes[i] = known->second;
    else
      missing.push_back(i);
  }
  if (!missing.empty()) {
    StackedNetworkImpl& g = stack_of(*generators.front(), static_cast<std::int64_t>(missing.size()));
    for (std::size_t k = 0; k < missing.size(); ++k) load_weights(g, static_cast<std::int64_t>(k), *generators[missing[k]]);
    const torch::Tensor made = g.forward(z.unsqueeze(0).expand({g.members(), z.size(0), z.size(1)}));
    for (std::size_t k = 0; k < missing.size(); ++k) {
      fakes[missing[k]] = made[static_cast<std::int64_t>(k)];
      if (reuse) reuse->fakes[generators[missing[k]]] = fakes[missing[k]];
    }
  }
  // Every discriminator on the real batch and on all the fakes.
  StackedNetworkImpl& d = stack_of(*discriminators.front(), nd);
  for (std::int64_t j = 0; j < nd; ++j) load_weights(d, j, *discriminators[j]);
  // [ND, NG * F, 1]: one generator's fakes at a time through every
  // discriminator, which keeps the activations to [ND, F, width].
  std::vector<torch::Tensor> scored;
  for (const torch::Tensor& f : fakes) scored.push_back(d.forward(f.unsqueeze(0).expand({nd, f.size(0), f.size(1)})));
  const torch::Tensor d_fake = torch::cat(scored, 1);
  std::vector<torch::Tensor> d_real_rows(discriminators.size());
  for (std::int64_t j = 0; j < nd; ++j) {
    if (!reuse) continue;
    const auto known = reuse->d_real.find(discriminators[j]);
    if (known != reuse->d_real.end()) d_real_rows[j] = known->second;
  }
  const bool all_known = std::all_of(d_real_rows.begin(), d_real_rows.end(), [](const torch::Tensor& t) { return t.defined(); });
  if (!all_known) {
    const torch::Tensor computed = d.forward(real.unsqueeze(0).expand({nd, real.size(0), real.size(1)}));
    for (std::int64_t j = 0; j < nd; ++j) {
      if (d_real_rows[j].defined()) continue;
      d_real_rows[j] = computed[j];
      if (reuse) reuse->d_real[discriminators[j]] = d_real_rows[j];
    }
  }
  set_fitness(generators, discriminators, d_fake, torch::stack(d_real_rows), bce);
}

}  // namespace cellgan
