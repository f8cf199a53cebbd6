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

// The losses of every pair of `cells` cells that each have the generators
// `generators[c]` (ng of them, every cell as many) and nd discriminators,
// from the discriminators' outputs on the fakes (`d_fake` [cells * ND,
// NG * F, 1], cell after cell) and on the real batches (`d_real` [cells * ND,
// F, 1]), taken per pair with the generator's loss kind and `mean`:
// [2, cells * NG * ND], the generators' losses then the discriminators',
// cell c's pair (i, j) (G i's fakes through D j) at (c * NG + i) * ND + j.
torch::Tensor pair_losses(const std::vector<const std::vector<Individual*>*>& generators, std::int64_t nd,
                          const torch::Tensor& d_fake, const torch::Tensor& d_real, BceForm bce, LossMean mean) {
  const auto cells = static_cast<std::int64_t>(generators.size());
  const auto ng = static_cast<std::int64_t>(generators.front()->size());
  const std::int64_t rows = d_real.size(1);
  const torch::Tensor pair_fake =
      d_fake.view({cells, nd, ng, rows, -1}).transpose(1, 2).reshape({cells * ng * nd, rows, -1});
  const torch::Tensor pair_real =
      d_real.view({cells, 1, nd, rows, -1}).expand({cells, ng, nd, rows, -1}).reshape({cells * ng * nd, rows, -1});
  std::vector<LossKind> kinds;
  for (const std::vector<Individual*>* cell : generators)
    for (const Individual* g : *cell)
      for (std::int64_t j = 0; j < nd; ++j) kinds.push_back(g->loss);
  const KindRows by_kind = kind_rows(kinds, d_real.device());  // sent once for both roles
  const torch::Tensor g_losses =
      losses_by_kind(by_kind, [&](LossKind k, const torch::Tensor& at) {
        return generator_loss(k, rows_of(pair_fake, at), bce, mean);
      }).per_member;
  const torch::Tensor d_losses =
      losses_by_kind(by_kind, [&](LossKind k, const torch::Tensor& at) {
        return discriminator_loss(discriminator_loss_for(k), rows_of(pair_real, at), rows_of(pair_fake, at), bce,
                                  mean);
      }).per_member;
  return torch::stack({g_losses, d_losses});
}

// Each generator's fitness becomes its mean loss over the discriminators,
// and the reverse, summed in the order the pairs were played; the pairs'
// losses are `value[0..1][at + i * ND + j]`.
void set_fitness(const std::vector<Individual*>& generators, const std::vector<Individual*>& discriminators,
                 const at::TensorAccessor<double, 2>& value, std::int64_t at) {
  const auto ng = static_cast<std::int64_t>(generators.size());
  const auto nd = static_cast<std::int64_t>(discriminators.size());
  std::vector<double> d_total(discriminators.size(), 0.0);
  for (std::int64_t i = 0; i < ng; ++i) {
    double g_total = 0.0;
    for (std::int64_t j = 0; j < nd; ++j) {
      g_total += value[0][at + i * nd + j];
      d_total[static_cast<std::size_t>(j)] += value[1][at + i * nd + j];
    }
    generators[static_cast<std::size_t>(i)]->fitness = g_total / static_cast<double>(nd);
  }
  for (std::int64_t j = 0; j < nd; ++j)
    discriminators[static_cast<std::size_t>(j)]->fitness = d_total[static_cast<std::size_t>(j)] / static_cast<double>(ng);
}

// The input of a stack whose row r reads `per_row[r]`: one tensor expanded
// over the rows (no copy) where every row reads the same one, else the rows
// stacked.
torch::Tensor rows_reading(const std::vector<torch::Tensor>& per_row) {
  const bool one = std::all_of(per_row.begin(), per_row.end(),
                               [&](const torch::Tensor& t) { return t.is_same(per_row.front()); });
  if (!one) return torch::stack(per_row);
  const torch::Tensor& t = per_row.front();
  std::vector<std::int64_t> size{static_cast<std::int64_t>(per_row.size())};
  for (const std::int64_t d : t.sizes()) size.push_back(d);
  return t.unsqueeze(0).expand(size);
}

}  // namespace

PairGame::PairGame() = default;
PairGame::~PairGame() = default;

StackedNetworkImpl& PairGame::stack_of(const Individual& like, std::int64_t members) {
  std::shared_ptr<StackedNetworkImpl>& stack = stacks_[{like.role(), members}];
  if (!stack) {
    torch::NoGradGuard no_grad;
    // Every row a game reads is loaded first (load_weights): nothing to draw.
    stack = std::make_shared<StackedNetworkImpl>(like.role(), like.shape(), members, InitialWeights::kUndrawn);
    for (torch::Tensor& t : stack->parameters()) t.requires_grad_(false);
    stack->eval();  // as the game plays the individuals: running statistics, no dropout
  }
  if (!(stack->parameters().front().device() == like.device()))
    place_on_device(*stack, like.device(), stack->drawn());
  return *stack;
}

void PairGame::play(const std::vector<Individual*>& generators, const std::vector<Individual*>& discriminators,
                    const torch::Tensor& real, const torch::Tensor& z, BceForm bce, PlayedOutputs* reuse) {
  play_cells({CellGame{generators, discriminators, real, z, reuse}}, bce);
}

std::vector<std::vector<torch::Tensor>> PairGame::fakes_of(const std::vector<const CellGame*>& cells) {
  std::vector<std::vector<torch::Tensor>> fakes(cells.size());
  std::vector<std::pair<std::size_t, std::size_t>> missing;  // (cell, generator)
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const CellGame& cell = *cells[c];
    fakes[c].resize(cell.generators.size());
    for (std::size_t i = 0; i < cell.generators.size(); ++i) {
      const auto known = cell.reuse ? cell.reuse->fakes.find(cell.generators[i]) : decltype(cell.reuse->fakes.end()){};
      if (cell.reuse && known != cell.reuse->fakes.end())
        fakes[c][i] = known->second;
      else
        missing.emplace_back(c, i);
    }
  }
  if (missing.empty()) return fakes;
  StackedNetworkImpl& g =
      stack_of(*cells[missing.front().first]->generators.front(), static_cast<std::int64_t>(missing.size()));
  std::vector<torch::Tensor> latents;
  std::vector<const Individual*> rows;
  for (const auto& [c, i] : missing) {
    rows.push_back(cells[c]->generators[i]);
    latents.push_back(cells[c]->z);
  }
  load_weights(g, rows);
  const torch::Tensor made = g.forward(rows_reading(latents));
  for (std::size_t k = 0; k < missing.size(); ++k) {
    const auto [c, i] = missing[k];
    fakes[c][i] = made[static_cast<std::int64_t>(k)];
    if (cells[c]->reuse) cells[c]->reuse->fakes[cells[c]->generators[i]] = fakes[c][i];
  }
  return fakes;
}

std::vector<torch::Tensor> PairGame::real_outputs_of(const std::vector<const CellGame*>& cells, StackedNetworkImpl& d,
                                                     const std::vector<std::int64_t>& first_row) {
  std::vector<torch::Tensor> rows(static_cast<std::size_t>(d.members()));
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (!cells[c]->reuse) continue;
    for (std::size_t j = 0; j < cells[c]->discriminators.size(); ++j) {
      const auto known = cells[c]->reuse->d_real.find(cells[c]->discriminators[j]);
      if (known != cells[c]->reuse->d_real.end()) rows[first_row[c] + j] = known->second;
    }
  }
  if (std::all_of(rows.begin(), rows.end(), [](const torch::Tensor& t) { return t.defined(); })) return rows;
  std::vector<torch::Tensor> inputs;
  for (const CellGame* cell : cells) inputs.insert(inputs.end(), cell->discriminators.size(), cell->real);
  const torch::Tensor computed = d.forward(rows_reading(inputs));
  for (std::size_t c = 0; c < cells.size(); ++c) {
    for (std::size_t j = 0; j < cells[c]->discriminators.size(); ++j) {
      torch::Tensor& row = rows[first_row[c] + j];
      if (row.defined()) continue;
      row = computed[first_row[c] + static_cast<std::int64_t>(j)];
      if (cells[c]->reuse) cells[c]->reuse->d_real[cells[c]->discriminators[j]] = row;
    }
  }
  return rows;
}

void PairGame::play_cells(const std::vector<CellGame>& all, BceForm bce) {
  std::vector<const CellGame*> cells;
  for (const CellGame& c : all) {
    if (!c.generators.empty() && !c.discriminators.empty() && is_stacked(c.generators.front()->shape().kind))
      cells.push_back(&c);
    else
      play_one_pair_at_a_time(c.generators, c.discriminators, c.real, c.z, bce, c.reuse);
  }
  if (cells.empty()) return;
  torch::NoGradGuard no_grad;
  const std::vector<std::vector<torch::Tensor>> fakes = fakes_of(cells);
  // Every discriminator, cell after cell, in one stack.
  std::vector<std::int64_t> first_row;
  std::int64_t nd = 0;
  std::size_t most_generators = 0;
  for (const CellGame* cell : cells) {
    first_row.push_back(nd);
    nd += static_cast<std::int64_t>(cell->discriminators.size());
    most_generators = std::max(most_generators, cell->generators.size());
  }
  StackedNetworkImpl& d = stack_of(*cells.front()->discriminators.front(), nd);
  std::vector<const Individual*> d_rows;  // row first_row[c] + j: cell c's discriminator j
  for (const CellGame* cell : cells) d_rows.insert(d_rows.end(), cell->discriminators.begin(), cell->discriminators.end());
  load_weights(d, d_rows);
  // Round k scores the k-th generator's fakes of every cell through the
  // cell's discriminators (a cell with fewer generators scores its last
  // one again, unread), which keeps the activations to [ND, F, width]:
  // [ND, most_generators * F, 1] in all.
  std::vector<torch::Tensor> scored;
  for (std::size_t k = 0; k < most_generators; ++k) {
    std::vector<torch::Tensor> inputs;
    for (std::size_t c = 0; c < cells.size(); ++c)
      inputs.insert(inputs.end(), cells[c]->discriminators.size(), fakes[c][std::min(k, fakes[c].size() - 1)]);
    scored.push_back(d.forward(rows_reading(inputs)));
  }
  const torch::Tensor d_fake = torch::cat(scored, 1);
  const std::vector<torch::Tensor> d_real = real_outputs_of(cells, d, first_row);
  // Every cell's pairs, read in one copy: taken together when the cells
  // agree in their numbers of generators, discriminators and rows, else
  // cell by cell.
  std::vector<torch::Tensor> losses;
  const bool uniform = std::all_of(cells.begin(), cells.end(), [&](const CellGame* c) {
    return c->generators.size() == cells.front()->generators.size() &&
           c->discriminators.size() == cells.front()->discriminators.size() &&
           c->real.size(0) == cells.front()->real.size(0);
  });
  const LossMean mean = d_fake.device().is_cpu() ? LossMean::kPerMember : LossMean::kPerMemberInFixedOrder;
  if (uniform) {
    std::vector<const std::vector<Individual*>*> generators;
    for (const CellGame* cell : cells) generators.push_back(&cell->generators);
    losses.push_back(pair_losses(generators, static_cast<std::int64_t>(cells.front()->discriminators.size()),
                                 d_fake.contiguous(), torch::stack(d_real), bce, mean));
  } else {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const CellGame& cell = *cells[c];
      const auto cell_nd = static_cast<std::int64_t>(cell.discriminators.size());
      const std::int64_t fake_columns = static_cast<std::int64_t>(cell.generators.size()) * cell.real.size(0);
      const auto real_rows = d_real.begin() + first_row[c];
      losses.push_back(pair_losses({&cell.generators}, cell_nd,
                                   d_fake.narrow(0, first_row[c], cell_nd).narrow(1, 0, fake_columns).contiguous(),
                                   torch::stack(std::vector<torch::Tensor>(real_rows, real_rows + cell_nd)), bce,
                                   mean));
    }
  }
  const torch::Tensor host = torch::cat(losses, 1).to(torch::kCPU, torch::kFloat64);
  const auto value = host.accessor<double, 2>();
  std::int64_t at = 0;
  for (const CellGame* cell : cells) {
    set_fitness(cell->generators, cell->discriminators, value, at);
    at += static_cast<std::int64_t>(cell->generators.size() * cell->discriminators.size());
  }
}

}  // namespace cellgan
