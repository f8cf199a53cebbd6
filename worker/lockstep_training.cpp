// Steps 4 and 5 of the cells of a worker at once (see lockstep_training.h).
#include "worker/lockstep_training.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "common/nn/cuda_step_graph.h"
#include "common/nn/device.h"
#include "common/nn/losses.h"
#include "common/nn/member_draws.h"
#include "common/nn/precision.h"
#include "common/nn/stacked_loss_scaler.h"
#include "common/nn/stacked_penalties.h"
#include "common/nn/stacked_losses.h"
#include "common/nn/stacked_networks.h"
#include "common/nn/staged_dropout.h"
#include "common/process_stats.h"
#include "common/step_schedule.h"
#include "worker/generation_steps.h"
#include "worker/lockstep_parts.h"

namespace cellgan {
namespace {

using Clock = std::chrono::steady_clock;

// Where a member of a stack comes from: its cell (an index of `cells`) and
// its index among that cell's copies.
struct Member {
  std::size_t cell = 0;
  std::size_t copy = 0;
};

std::vector<Individual>& copies_of(const LockstepCell& c, Role role) {
  return role == Role::kGenerator ? c.work->selected_generators : c.work->selected_discriminators;
}

std::vector<Member> members_of(const std::vector<LockstepCell>& cells, Role role) {
  std::vector<Member> members;
  for (std::size_t k = 0; k < cells.size(); ++k)
    for (std::size_t i = 0; i < copies_of(cells[k], role).size(); ++i) members.push_back({k, i});
  return members;
}

// The copies of `role` of every cell as the rows of one stack.
std::unique_ptr<StackedMembers> stack_copies(const std::vector<LockstepCell>& cells, const std::vector<Member>& members,
                                             Role role, torch::Device device) {
  const Individual& first = copies_of(cells[members.front().cell], role).front();
  const auto size = static_cast<std::int64_t>(members.size());
  std::unique_ptr<StackedMembers> stack;
  // Every row is loaded below: nothing to draw.
  if (role == Role::kGenerator)
    stack = std::make_unique<StackedGenerator>(first.shape(), size, first.learning_rate(), first.adam_settings(),
                                               first.loss, device, InitialWeights::kUndrawn);
  else
    stack = std::make_unique<StackedDiscriminator>(first.shape(), size, first.learning_rate(), first.adam_settings(),
                                                   first.loss, device, InitialWeights::kUndrawn);
  std::vector<const Individual*> rows;
  for (const Member& m : members) {
    const Individual& copy = copies_of(cells[m.cell], role)[m.copy];
    if (copy.shape().kind != first.shape().kind || copy.role() != role)
      throw std::invalid_argument("train_in_lockstep: the copies differ in kind");
    rows.push_back(&copy);
  }
  stack->load_rows(rows);
  // The copies live in the stack until write_back(): never twice.
  for (const LockstepCell& c : cells) copies_of(c, role).clear();
  return stack;
}

// `cells`, once their data are known to give batches of one size.
const std::vector<LockstepCell>& checked(const TrainingConfig& training, const TrainingData& data,
                                         const std::vector<LockstepCell>& cells) {
  for (const LockstepCell& c : cells) {
    const TrainingData& own = c.data ? *c.data : data;
    if (std::min(training.batch_size, own.size()) != std::min(training.batch_size, data.size()))
      throw std::invalid_argument("train_in_lockstep: the cells' data give batches of different sizes");
  }
  return cells;
}

// The lockstep run: the stacks, the cells' streams and what is watched.
// Each step is made in two parts: first everything drawn from the cells'
// streams is drawn in the order of the reference (lockstep_training.h names it), into tensors that keep their storage
// from step to step: the integers on the host (mutations, opponents, the
// rows of the batch, then sent), the latent vectors (LatentDraws: on a GPU
// copied from 16 steps' worth drawn at once), dropout masks and WGAN-GP's
// shares from each cell's generators into its members' rows, on a GPU by
// kernels there (member_draws.h); then the step itself
// enqueues device work only, reading those tensors, so that it can be
// captured as a CUDA graph and replayed (cuda_step_graph.h): the draws are
// enqueued before it on the same stream, outside any capture. A step
// is replayed when it plays its own opponents' stack; the others (copies of
// picked opponents, population_size > 1) run as they are, their copies
// drawing their own dropout masks. What is watched is read after the last
// step.
class Lockstep {
 public:
  Lockstep(const TrainingConfig& training, const TrainingData& data, std::int64_t latent_dim,
           const std::vector<LockstepCell>& cells, bool cuda_graphs, std::int64_t steps_a_draw)
      : training_(training), data_(data), latent_dim_(latent_dim), cells_(cells),
        g_members_(members_of(checked(training, data, cells), Role::kGenerator)),
        d_members_(members_of(cells, Role::kDiscriminator)),
        gens_(stack_copies(cells, g_members_, Role::kGenerator, data.device())),
        discs_(stack_copies(cells, d_members_, Role::kDiscriminator, data.device())),
        streams_(works_of(cells), data.device()),
        g_draws_(of_members(streams_.latent, g_members_), steps_a_draw),
        d_draws_(of_members(streams_.latent, d_members_), steps_a_draw),
        g_opponents_(*discs_, gens_->size(), of_members(streams_.noise, g_members_)),
        d_opponents_(*gens_, discs_->size(), of_members(streams_.noise, d_members_)),
        g_rates_(*gens_), d_rates_(*discs_), g_kinds_(kind_rows(gens_->loss, data.device())),
        mutating_(cells.size(), 0.0), summing_(copies_score_decides_nothing(training)),
        shared_data_(std::all_of(cells.begin(), cells.end(),
                                 [&data](const LockstepCell& c) { return c.data == nullptr || c.data == &data; })),
        batch_rows_(std::min(training.batch_size, data.size())), cuda_graphs_(cuda_graphs) {
    for (const LockstepCell& c : cells) {
      const TrainingData& own = c.data ? *c.data : data;
      orders_.push_back(
          to_device_without_waiting(torch::randperm(own.size(), c.work->generator, torch::kLong), data.device()));
      delay_ = std::max(delay_, c.work->batch_delay);
    }
    gens_->network()->set_member_generators(of_members(streams_.noise, g_members_));
    discs_->network()->set_member_generators(of_members(streams_.noise, d_members_));
    if (training.precision == Precision::kFp16) {
      g_scaler_.emplace(gens_->size(), data.device());
      d_scaler_.emplace(discs_->size(), data.device());
    }
  }

  void run(std::int64_t batches) {
    release_free_memory();  // the copies, now in the stacks
    for (std::int64_t b = 0; b < batches; ++b) {
      if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
      if (generator_steps_on(training_, b)) {
        const bool own = prepare_generator_step();
        run_step(g_graph_, own, [this] { generator_step(); });
      }
      if (discriminator_steps_on(training_, b)) {
        const bool own = prepare_discriminator_step(b);
        run_step(d_graph_, own, [this] { discriminator_step(); });
      }
    }
    finish();
  }

  const std::vector<double>& mutating() const { return mutating_; }

 private:
  // The step captured and replayed when graphs are on and it plays its own
  // opponents' stack; else run as it is.
  void run_step(CudaStepGraph& graph, bool own_opponents, const std::function<void()>& step) {
    if (cuda_graphs_ && own_opponents)
      graph.run(step);
    else
      step();
  }

  // Host: the rows of each discriminator member's batch b into
  // real_index_ [P_D, B] (its cell's order of its own data).
  void prepare_real_rows(std::int64_t b) {
    const std::int64_t bs = training_.batch_size;
    std::vector<torch::Tensor> index;
    for (const Member& m : d_members_) {
      const std::int64_t n = data_of(m.cell).size();
      const std::int64_t start = (b * bs) % std::max<std::int64_t>(1, n - bs + 1);
      index.push_back(orders_[m.cell].narrow(0, start, std::min(bs, n)));
    }
    store(real_index_, torch::stack(index));
  }

  // Step: the rows real_index_ names, [P_D, B, ...], read in one gather
  // when the cells share their data.
  torch::Tensor real_rows() const {
    if (!shared_data_) {
      std::vector<torch::Tensor> per_member;
      for (std::size_t p = 0; p < d_members_.size(); ++p)
        per_member.push_back(data_of(d_members_[p].cell).rows(real_index_[static_cast<std::int64_t>(p)]));
      return torch::stack(per_member);
    }
    const torch::Tensor real = data_.rows(real_index_.flatten());
    std::vector<std::int64_t> sizes{real_index_.size(0), real_index_.size(1)};
    for (std::int64_t d = 1; d < real.dim(); ++d) sizes.push_back(real.size(d));
    return real.view(sizes);
  }

  const TrainingData& data_of(std::size_t cell) const {
    return cells_[cell].data ? *cells_[cell].data : data_;
  }

  // `to` becomes a copy of `from`, in the storage it had (made at the first
  // call). From the host to a GPU the copy does not wait for the GPU
  // (copy_without_waiting; LibTorch keeps the pinned block until the copy is
  // done), so the host draws the next step while the GPU runs.
  void store(torch::Tensor& to, const torch::Tensor& from) const {
    if (!to.defined()) to = torch::empty(from.sizes(), from.options().device(data_.device()));
    copy_without_waiting(from, to);
  }

  // For each member of `stack` (its members `members`), on the host,
  // mutates its learning rate and picks an opponent of its cell among
  // `opponents`, in the reference's order, the rates then sent at once; and puts
  // its latent batch from its cell's latent stream into its row of `z`
  // [P, B, latent] (`draws`; on a GPU, there). Returns the picked rows.
  std::vector<std::int64_t> draw_step(StackedMembers& stack, HostRates& rates, const std::vector<Member>& members,
                                      const std::vector<Member>& opponents, LatentDraws& draws, torch::Tensor& z) {
    std::vector<std::size_t> first(cells_.size(), opponents.size()), count(cells_.size(), 0);
    for (std::size_t q = 0; q < opponents.size(); ++q) {
      first[opponents[q].cell] = std::min(first[opponents[q].cell], q);
      ++count[opponents[q].cell];
    }
    std::vector<std::int64_t> picked;
    for (std::size_t p = 0; p < members.size(); ++p) {
      GenerationWorkingSet& work = *cells_[members[p].cell].work;
      const auto started = Clock::now();
      mutate(rates, p, work.rng);
      mutating_[members[p].cell] += std::chrono::duration<double>(Clock::now() - started).count();
      picked.push_back(static_cast<std::int64_t>(first[members[p].cell] + work.rng.below(count[members[p].cell])));
    }
    stack.set_learning_rates(rates.own, rates.adam);
    if (!z.defined())
      z = torch::empty({static_cast<std::int64_t>(members.size()), batch_rows_, latent_dim_},
                       torch::TensorOptions().dtype(torch::kFloat32).device(data_.device()));
    draws.next(z);
    return picked;
  }

  // mutate_learning_rate() of generation_steps.h on member p's rates.
  void mutate(HostRates& rates, std::size_t p, SplitMix64& rng) const {
    const double lr0 = training_.learning_rate;
    if (rng.uniform() < training_.mutation_probability) {
      const double delta = training_.mutation_scale * rng.normal(-lr0 / 10.0, lr0);
      rates.own[p] = std::max(0.0, rates.own[p] + delta);
      rates.adam[p] = rates.own[p];
    }
    if (!training_.mutated_lr_reaches_adam) rates.adam[p] = lr0;
  }

  bool prepare_generator_step() {
    const std::vector<std::int64_t> picked = draw_step(*gens_, g_rates_, g_members_, d_members_, g_draws_, g_latent_);
    ++g_watch_.steps;
    if (!g_opponents_.plan(picked)) return false;
    StackedNetworkImpl& discs = *discs_->network();
    clear_staged_dropout(discs);
    stage_dropout_pass(discs, batch_rows_, data_.device());
    return true;
  }

  void generator_step() {
    restart_staged_dropout(*discs_->network());
    StackedMembers& discs = g_opponents_.stack();
    gens_->optimizer().zero_grad();
    // The discriminators' own gradients are not wanted here (their step
    // zeroes them): the backward pass goes through them to G only.
    const FrozenParameters frozen(discs);
    torch::Tensor d_fake;
    {
      const AutocastScope autocast(training_.precision, data_.device());
      d_fake = discs.forward(gens_->forward(g_latent_));
    }
    g_opponents_.return_buffers();
    const MemberLosses losses = losses_by_kind(g_kinds_, [&](LossKind kind, const torch::Tensor& rows) {
      return generator_loss(kind, rows_of(d_fake, rows), training_.bce, LossMean::kPerMember);
    });
    backward_and_step(*gens_, losses.attached, losses.total, g_scaler_);
    g_watch_.note(losses.per_member, summing_);
  }

  bool prepare_discriminator_step(std::int64_t b) {
    const std::vector<std::int64_t> picked = draw_step(*discs_, d_rates_, d_members_, g_members_, d_draws_, d_latent_);
    const bool own = d_opponents_.plan(picked);
    std::vector<LossKind> kinds;
    for (const std::int64_t g : picked) kinds.push_back(discriminator_loss_for(gens_->loss[static_cast<std::size_t>(g)]));
    // The own opponents' grouping is made once: a captured step keeps reading it.
    KindRows& rows = own ? d_own_kinds_ : d_kinds_;
    if (kinds != rows.kinds || rows.distinct.empty()) rows = kind_rows(kinds, data_.device());
    d_step_kinds_ = &rows;
    prepare_real_rows(b);
    // The discriminators' passes in the step's order: real, fake, and
    // WGAN-GP's interpolates after its shares.
    StackedNetworkImpl& discs = *discs_->network();
    clear_staged_dropout(discs);
    stage_dropout_pass(discs, batch_rows_, data_.device());
    stage_dropout_pass(discs, batch_rows_, data_.device());
    if (wgan_gp()) {
      draw_shares();
      stage_dropout_pass(discs, batch_rows_, data_.device());
    }
    ++d_watch_.steps;
    return own;
  }

  void discriminator_step() {
    restart_staged_dropout(*discs_->network());
    const torch::Tensor real = real_rows();
    torch::Tensor fake;
    {
      torch::NoGradGuard no_grad;
      const AutocastScope autocast(training_.precision, data_.device());
      fake = d_opponents_.stack().forward(d_latent_).to(torch::kFloat);  // itself in fp32
      d_opponents_.return_buffers();
    }
    discs_->optimizer().zero_grad();
    const bool r1 = training_.r1_penalty > 0.0;
    const torch::Tensor real_in = r1 ? real.detach().requires_grad_(true) : real;
    torch::Tensor d_real, d_fake;
    {
      const AutocastScope autocast(training_.precision, data_.device());
      d_real = discs_->forward(real_in);
      d_fake = discs_->forward(fake);
    }
    MemberLosses losses = losses_by_kind(*d_step_kinds_, [&](LossKind kind, const torch::Tensor& rows) {
      return discriminator_loss(kind, rows_of(d_real, rows), rows_of(d_fake, rows), training_.bce,
                                LossMean::kPerMember);
    });
    torch::Tensor penalty;  // [P]: discriminator_step.h's, per member
    if (r1)  // fp16: the input gradient taken on the scaled outputs, as the loss's
      penalty = stacked_r1_penalty(d_real, real_in, training_.r1_penalty, d_scaler_ ? d_scaler_->scales() : torch::Tensor());
    if (wgan_gp()) penalty = stacked_gradient_penalty(*discs_, real, fake, shares_, training_.gp_lambda);
    const torch::Tensor attached = penalty.defined() ? losses.attached + penalty : losses.attached;
    if (penalty.defined()) {
      losses.per_member = losses.per_member + penalty.detach();
      losses.total = losses.total + penalty.sum();
    }
    backward_and_step(*discs_, attached, losses.total, d_scaler_);
    d_watch_.note(losses.per_member, summing_);
  }

  bool wgan_gp() const { return training_.loss == LossKind::kWganGp && training_.gp_lambda > 0.0; }

  // The backward pass of `total` and the stack's Adam step; with fp16, of
  // each member's loss (`per_member`, in the graph) times its own scale,
  // and a step of the members whose gradients stayed finite.
  static void backward_and_step(StackedMembers& stack, const torch::Tensor& per_member, const torch::Tensor& total,
                                std::optional<StackedLossScaler>& scaler) {
    if (!scaler) {
      total.backward();
      stack.optimizer().step();
      return;
    }
    scaler->scaled(per_member).backward();
    std::vector<torch::Tensor> gradients;
    for (const torch::Tensor& p : stack.network()->parameters()) gradients.push_back(p.grad());
    const torch::Tensor finite = scaler->unscale(gradients);
    scaler->update(finite);
    stack.optimizer().step(finite);
  }

  // WGAN-GP's e ~ U[0, 1) per row into shares_ [P_D, B, 1], drawn member
  // after member from its cell's stream (the reference draws them from
  // Torch's global generator seeded alike).
  void draw_shares() {
    if (!shares_.defined())
      shares_ = torch::empty({static_cast<std::int64_t>(d_members_.size()), batch_rows_, 1},
                             torch::TensorOptions().dtype(torch::kFloat32).device(data_.device()));
    draw_uniform_rows(shares_, of_members(streams_.noise, d_members_));
  }

  void finish();

  static std::vector<const GenerationWorkingSet*> works_of(const std::vector<LockstepCell>& cells) {
    std::vector<const GenerationWorkingSet*> works;
    for (const LockstepCell& c : cells) works.push_back(c.work);
    return works;
  }

  // The cells' `streams`, one for each of `members`.
  static std::vector<at::Generator> of_members(const std::vector<at::Generator>& streams,
                                               const std::vector<Member>& members) {
    std::vector<at::Generator> out;
    for (const Member& m : members) out.push_back(streams[m.cell]);
    return out;
  }

  const TrainingConfig& training_;
  const TrainingData& data_;
  std::int64_t latent_dim_;
  const std::vector<LockstepCell>& cells_;
  std::vector<Member> g_members_, d_members_;
  std::unique_ptr<StackedMembers> gens_, discs_;
  CellStreams streams_;
  LatentDraws g_draws_, d_draws_;
  Opponents g_opponents_, d_opponents_;
  HostRates g_rates_, d_rates_;
  // The members' loss kinds, grouped: G's; D's against its own opponents
  // and against picked copies; the ones of the D step to come.
  KindRows g_kinds_, d_own_kinds_, d_kinds_;
  const KindRows* d_step_kinds_ = nullptr;
  std::vector<double> mutating_;
  bool summing_;
  bool shared_data_;  // every cell trains on `data_`
  std::int64_t batch_rows_;
  bool cuda_graphs_;
  std::vector<torch::Tensor> orders_;
  std::chrono::milliseconds delay_{0};
  // The steps' inputs, in the same storage every step: latent batches
  // [P, B, latent], the rows of the real batch [P_D, B], WGAN-GP's shares.
  torch::Tensor g_latent_, d_latent_, real_index_, shares_;
  CudaStepGraph g_graph_, d_graph_;
  StackWatch g_watch_, d_watch_;
  std::optional<StackedLossScaler> g_scaler_, d_scaler_;  // training.precision fp16
};

// The watches read once, into each working set.
void read_back(const StackWatch& watch, const std::vector<Member>& members, bool summing,
               const std::vector<LockstepCell>& cells, Role role) {
  std::vector<double> lost(members.size(), 0.0), means(members.size(), std::numeric_limits<double>::quiet_NaN());
  if (watch.steps > 0) {
    std::vector<torch::Tensor> values{watch.lost.to(torch::kFloat64)};
    if (summing) values.push_back(watch.sum.to(torch::kFloat64) / static_cast<double>(watch.steps));
    const torch::Tensor host = torch::stack(values).cpu();
    for (std::size_t p = 0; p < members.size(); ++p) {
      lost[p] = host[0][static_cast<std::int64_t>(p)].item<double>();
      if (summing) means[p] = host[1][static_cast<std::int64_t>(p)].item<double>();
    }
  }
  std::vector<std::size_t> counts(cells.size(), 0);
  for (const Member& m : members) ++counts[m.cell];
  for (std::size_t k = 0; k < cells.size(); ++k) {
    GenerationWorkingSet& w = *cells[k].work;
    const std::size_t n = counts[k];
    (role == Role::kGenerator ? w.diverged_generators : w.diverged_discriminators).assign(n, false);
    (role == Role::kGenerator ? w.training_generator_losses : w.training_discriminator_losses)
        .assign(summing ? n : 0, std::numeric_limits<double>::quiet_NaN());
  }
  for (std::size_t p = 0; p < members.size(); ++p) {
    GenerationWorkingSet& w = *cells[members[p].cell].work;
    (role == Role::kGenerator ? w.diverged_generators : w.diverged_discriminators)[members[p].copy] = lost[p] != 0.0;
    if (summing)
      (role == Role::kGenerator ? w.training_generator_losses : w.training_discriminator_losses)[members[p].copy] =
          means[p];
  }
}

// The trained rows back as the cells' copies (members run cell by cell,
// copy by copy), marked as trained there.
void write_back(StackedMembers& stack, const std::vector<Member>& members, const std::vector<LockstepCell>& cells,
                Role role) {
  for (std::size_t p = 0; p < members.size(); ++p) stack.source_cell[p] = cells[members[p].cell].cell;
  std::vector<Individual> rows = stack.to_individuals();
  for (std::size_t p = 0; p < members.size(); ++p) copies_of(cells[members[p].cell], role).push_back(std::move(rows[p]));
}

// fp16's skipped steps, a line per member that skipped any, in its cell's events.
void report_skips(const std::optional<StackedLossScaler>& scaler, const std::vector<Member>& members,
                  const std::vector<LockstepCell>& cells, const char* role) {
  if (!scaler) return;
  const std::vector<std::int64_t> skipped = scaler->skipped();
  for (std::size_t p = 0; p < members.size(); ++p)
    if (skipped[p] > 0)
      cells[members[p].cell].work->events.push_back(
          fmt::format("fp16: {} step(s) of {} copy {} skipped, its gradients overflowed", skipped[p], role,
                      members[p].copy));
}

void Lockstep::finish() {
  read_back(g_watch_, g_members_, summing_, cells_, Role::kGenerator);
  read_back(d_watch_, d_members_, summing_, cells_, Role::kDiscriminator);
  report_skips(g_scaler_, g_members_, cells_, "generator");
  report_skips(d_scaler_, d_members_, cells_, "discriminator");
  // No gradient is wanted now, and each stack is freed once written back,
  // so at most one role is held twice.
  gens_->release_gradients();
  discs_->release_gradients();
  release_free_memory();  // and what the steps' passes left free
  write_back(*gens_, g_members_, cells_, Role::kGenerator);
  gens_.reset();
  write_back(*discs_, d_members_, cells_, Role::kDiscriminator);
  discs_.reset();
}

}  // namespace

bool trains_in_lockstep(const NetworkShape& shape) { return is_stacked(shape.kind); }

std::vector<double> train_in_lockstep(const TrainingConfig& training, const TrainingData& data, std::int64_t batches,
                                      std::int64_t latent_dim, const std::vector<LockstepCell>& cells,
                                      bool cuda_graphs, std::int64_t latent_steps_a_draw) {
  if (cells.empty()) return {};
  // On a GPU 16 ([P, 16, B, latent] a stack, one kernel a step instead of P);
  // on the CPU, which launches nothing, 1.
  if (latent_steps_a_draw <= 0) latent_steps_a_draw = data.device().is_cuda() ? 16 : 1;
  const NetworkShape& shape = cells.front().work->selected_generators.front().shape();
  if (!trains_in_lockstep(shape))
    throw std::invalid_argument("train_in_lockstep: this network kind is not stacked");
  Lockstep lockstep(training, data, latent_dim, cells, cuda_graphs, latent_steps_a_draw);
  lockstep.run(batches);
  return lockstep.mutating();
}

}  // namespace cellgan
