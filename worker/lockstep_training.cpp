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

#include "common/nn/device.h"
#include "common/nn/losses.h"
#include "common/nn/precision.h"
#include "common/nn/stacked_loss_scaler.h"
#include "common/nn/stacked_losses.h"
#include "common/nn/stacked_networks.h"
#include "common/step_schedule.h"
#include "worker/generation_steps.h"

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
  if (role == Role::kGenerator)
    stack = std::make_unique<StackedGenerator>(first.shape(), size, first.learning_rate(), first.adam_settings(),
                                               first.loss, device);
  else
    stack = std::make_unique<StackedDiscriminator>(first.shape(), size, first.learning_rate(), first.adam_settings(),
                                                   first.loss, device);
  for (std::int64_t p = 0; p < size; ++p) {
    const Member& m = members[static_cast<std::size_t>(p)];
    const Individual& copy = copies_of(cells[m.cell], role)[m.copy];
    if (copy.shape().kind != first.shape().kind || copy.role() != role)
      throw std::invalid_argument("train_in_lockstep: the copies differ in kind");
    stack->load_row(p, copy);
  }
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

// The other stack's rows that each member plays against, one per member:
// the stack itself when every member picks its own row, else a stack of
// opponents the picked rows are copied into before each use. A copy's
// dropout draws from the streams of the members that play it (`streams`);
// what its forward passes change in its buffers (batch norm's running
// statistics) goes back to the picked rows, from the first member that
// picked each.
class Opponents {
 public:
  Opponents(StackedMembers& stack, std::int64_t members, std::vector<at::Generator> streams)
      : stack_(stack), members_(members), streams_(std::move(streams)) {}

  StackedMembers& pick(const std::vector<std::int64_t>& rows) {
    bool own = members_ == stack_.size();
    for (std::size_t p = 0; own && p < rows.size(); ++p) own = rows[p] == static_cast<std::int64_t>(p);
    picked_.clear();
    if (own) return stack_;
    if (!copy_) make_copy();
    picked_ = rows;
    torch::NoGradGuard no_grad;
    const torch::Tensor index = torch::tensor(rows, torch::kLong).to(stack_.device());
    copy_rows(stack_.network()->parameter_tensors(), copy_->network()->parameter_tensors(), index);
    copy_rows(stack_.network()->buffer_tensors(), copy_->network()->buffer_tensors(), index);
    return *copy_;
  }

  // After the forward passes of the last pick(): its copy's buffers back.
  void return_buffers() {
    const std::vector<StackedTensor> from = copy_ ? copy_->network()->buffer_tensors() : std::vector<StackedTensor>{};
    if (picked_.empty() || from.empty()) return;
    std::vector<std::int64_t> members, rows;
    for (std::size_t p = 0; p < picked_.size(); ++p) {
      if (std::find(rows.begin(), rows.end(), picked_[p]) != rows.end()) continue;
      members.push_back(static_cast<std::int64_t>(p));
      rows.push_back(picked_[p]);
    }
    torch::NoGradGuard no_grad;
    const torch::Tensor member_index = torch::tensor(members, torch::kLong).to(stack_.device());
    const torch::Tensor row_index = torch::tensor(rows, torch::kLong).to(stack_.device());
    const std::vector<StackedTensor> to = stack_.network()->buffer_tensors();
    for (std::size_t i = 0; i < to.size(); ++i)
      to[i].stacked.index_copy_(0, row_index, from[i].stacked.index_select(0, member_index));
  }

 private:
  void make_copy() {
    const AdamSettings& adam = stack_.adam_settings();
    if (stack_.role() == Role::kGenerator)
      copy_ = std::make_unique<StackedGenerator>(stack_.shape(), members_, 0.0, adam, LossKind::kBce, stack_.device());
    else
      copy_ = std::make_unique<StackedDiscriminator>(stack_.shape(), members_, 0.0, adam, LossKind::kBce,
                                                     stack_.device());
    for (const StackedTensor& t : copy_->network()->parameter_tensors()) t.stacked.requires_grad_(false);
    copy_->network()->set_member_generators(streams_);
  }

  static void copy_rows(const std::vector<StackedTensor>& from, const std::vector<StackedTensor>& to,
                        const torch::Tensor& index) {
    for (std::size_t i = 0; i < from.size(); ++i) to[i].stacked.copy_(from[i].stacked.index_select(0, index));
  }

  StackedMembers& stack_;
  std::int64_t members_;
  std::vector<at::Generator> streams_;
  std::unique_ptr<StackedMembers> copy_;
  std::vector<std::int64_t> picked_;  // the rows of the last pick() that used the copy
};

// While it lives, `stack`'s parameters take no gradient (a backward pass
// goes through them, not into them); then they take it again.
class FrozenParameters {
 public:
  explicit FrozenParameters(StackedMembers& stack) {
    for (const StackedTensor& t : stack.network()->parameter_tensors())
      if (t.stacked.requires_grad()) frozen_.push_back(t.stacked.requires_grad_(false));
  }
  ~FrozenParameters() {
    for (torch::Tensor& t : frozen_) t.requires_grad_(true);
  }
  FrozenParameters(const FrozenParameters&) = delete;
  FrozenParameters& operator=(const FrozenParameters&) = delete;

 private:
  std::vector<torch::Tensor> frozen_;
};

// What train()'s LossWatch keeps, for every member at once, on the device.
struct StackWatch {
  torch::Tensor lost;  // [P] bool
  torch::Tensor sum;   // [P], when summing
  std::int64_t steps = 0;

  void note(const torch::Tensor& per_member, bool summing) {
    const torch::Tensor bad = torch::isfinite(per_member).logical_not();
    lost = lost.defined() ? lost.logical_or(bad) : bad;
    if (summing) sum = sum.defined() ? sum + per_member : per_member;
    ++steps;
  }
};

// The lockstep run: the stacks, the cells' streams and what is watched.
class Lockstep {
 public:
  Lockstep(const TrainingConfig& training, const TrainingData& data, std::int64_t latent_dim,
           const std::vector<LockstepCell>& cells)
      : training_(training), data_(data), latent_dim_(latent_dim), cells_(cells),
        g_members_(members_of(checked(training, data, cells), Role::kGenerator)),
        d_members_(members_of(cells, Role::kDiscriminator)),
        gens_(stack_copies(cells, g_members_, Role::kGenerator, data.device())),
        discs_(stack_copies(cells, d_members_, Role::kDiscriminator, data.device())),
        streams_(cell_streams(cells)),
        g_opponents_(*discs_, gens_->size(), member_streams(g_members_)),
        d_opponents_(*gens_, discs_->size(), member_streams(d_members_)),
        mutating_(cells.size(), 0.0), summing_(copies_score_decides_nothing(training)),
        shared_data_(std::all_of(cells.begin(), cells.end(),
                                 [&data](const LockstepCell& c) { return c.data == nullptr || c.data == &data; })) {
    for (const LockstepCell& c : cells) {
      const TrainingData& own = c.data ? *c.data : data;
      orders_.push_back(torch::randperm(own.size(), c.work->generator, torch::kLong).to(data.device()));
      delay_ = std::max(delay_, c.work->batch_delay);
    }
    gens_->network()->set_member_generators(member_streams(g_members_));
    discs_->network()->set_member_generators(member_streams(d_members_));
    if (training.precision == Precision::kFp16) {
      g_scaler_.emplace(gens_->size(), data.device());
      d_scaler_.emplace(discs_->size(), data.device());
    }
  }

  void run(std::int64_t batches) {
    for (std::int64_t b = 0; b < batches; ++b) {
      if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
      const torch::Tensor real = real_batch(b);
      if (generator_steps_on(training_, b)) step_generators(real.size(1));
      if (discriminator_steps_on(training_, b)) step_discriminators(real);
    }
    finish();
  }

  const std::vector<double>& mutating() const { return mutating_; }

 private:
  // Each discriminator member's rows of its cell's batch b: [P_D, B, ...],
  // read in one gather when the cells share their data.
  torch::Tensor real_batch(std::int64_t b) const {
    const std::int64_t bs = training_.batch_size;
    std::vector<torch::Tensor> index, per_member;
    for (const Member& m : d_members_) {
      const TrainingData& data = data_of(m.cell);
      const std::int64_t n = data.size();
      const std::int64_t start = (b * bs) % std::max<std::int64_t>(1, n - bs + 1);
      index.push_back(orders_[m.cell].narrow(0, start, std::min(bs, n)));
      if (shared_data_) continue;
      per_member.push_back(data.rows(index.back()));
      index.clear();
    }
    if (!shared_data_) return torch::stack(per_member);
    const torch::Tensor real = data_.rows(torch::cat(index));
    std::vector<std::int64_t> sizes{static_cast<std::int64_t>(d_members_.size()), index.front().size(0)};
    for (std::int64_t d = 1; d < real.dim(); ++d) sizes.push_back(real.size(d));
    return real.view(sizes);
  }

  const TrainingData& data_of(std::size_t cell) const {
    return cells_[cell].data ? *cells_[cell].data : data_;
  }

  // For each member of `stack` (its members `members`): mutates its
  // learning rate, picks an opponent of its cell among `opponents`, and
  // draws its latent batch, in train()'s order. Returns the picked rows
  // and the latent batches [P, B, latent].
  torch::Tensor draw_step(StackedMembers& stack, const std::vector<Member>& members,
                          const std::vector<Member>& opponents, std::int64_t bs, std::vector<std::int64_t>& picked) {
    std::vector<std::size_t> first(cells_.size(), opponents.size()), count(cells_.size(), 0);
    for (std::size_t q = 0; q < opponents.size(); ++q) {
      first[opponents[q].cell] = std::min(first[opponents[q].cell], q);
      ++count[opponents[q].cell];
    }
    std::vector<torch::Tensor> latent;
    picked.clear();
    for (std::size_t p = 0; p < members.size(); ++p) {
      GenerationWorkingSet& work = *cells_[members[p].cell].work;
      const auto started = Clock::now();
      mutate(stack, static_cast<std::int64_t>(p), work.rng);
      mutating_[members[p].cell] += std::chrono::duration<double>(Clock::now() - started).count();
      picked.push_back(static_cast<std::int64_t>(first[members[p].cell] + work.rng.below(count[members[p].cell])));
      latent.push_back(torch::randn({bs, latent_dim_}, work.generator, torch::kFloat32));
    }
    return torch::stack(latent).to(data_.device());
  }

  // mutate_learning_rate() of generation_steps.h on member p.
  void mutate(StackedMembers& stack, std::int64_t p, SplitMix64& rng) const {
    const double lr0 = training_.learning_rate;
    if (rng.uniform() < training_.mutation_probability) {
      const double delta = training_.mutation_scale * rng.normal(-lr0 / 10.0, lr0);
      stack.set_learning_rate(p, std::max(0.0, stack.learning_rate(p) + delta));
    }
    if (!training_.mutated_lr_reaches_adam) stack.set_adam_learning_rate(p, lr0);
  }

  void step_generators(std::int64_t bs) {
    std::vector<std::int64_t> picked;
    const torch::Tensor z = draw_step(*gens_, g_members_, d_members_, bs, picked);
    StackedMembers& discs = g_opponents_.pick(picked);
    gens_->optimizer().zero_grad();
    // The discriminators' own gradients are not wanted here (their step
    // zeroes them): the backward pass goes through them to G only.
    const FrozenParameters frozen(discs);
    torch::Tensor d_fake;
    {
      const AutocastScope autocast(training_.precision, data_.device());
      d_fake = discs.forward(gens_->forward(z));
    }
    g_opponents_.return_buffers();
    const MemberLosses losses =
        losses_by_kind(gens_->loss, data_.device(), [&](LossKind kind, const torch::Tensor& rows) {
          return generator_loss(kind, rows_of(d_fake, rows), training_.bce, LossMean::kPerMember);
        });
    backward_and_step(*gens_, losses.attached, losses.total, g_scaler_);
    g_watch_.note(losses.per_member, summing_);
  }

  void step_discriminators(const torch::Tensor& real) {
    std::vector<std::int64_t> picked;
    const torch::Tensor z = draw_step(*discs_, d_members_, g_members_, real.size(1), picked);
    torch::Tensor fake;
    {
      torch::NoGradGuard no_grad;
      const AutocastScope autocast(training_.precision, data_.device());
      fake = d_opponents_.pick(picked).forward(z).to(torch::kFloat);  // itself in fp32
      d_opponents_.return_buffers();
    }
    std::vector<LossKind> kinds;
    for (const std::int64_t g : picked) kinds.push_back(discriminator_loss_for(gens_->loss[static_cast<std::size_t>(g)]));
    discs_->optimizer().zero_grad();
    const bool r1 = training_.r1_penalty > 0.0;
    const torch::Tensor real_in = r1 ? real.detach().requires_grad_(true) : real;
    torch::Tensor d_real, d_fake;
    {
      const AutocastScope autocast(training_.precision, data_.device());
      d_real = discs_->forward(real_in);
      d_fake = discs_->forward(fake);
    }
    MemberLosses losses = losses_by_kind(kinds, data_.device(), [&](LossKind kind, const torch::Tensor& rows) {
      return discriminator_loss(kind, rows_of(d_real, rows), rows_of(d_fake, rows), training_.bce,
                                LossMean::kPerMember);
    });
    torch::Tensor penalty;  // [P]: discriminator_step.h's, per member
    if (r1) penalty = (training_.r1_penalty / 2.0) * input_gradient(d_real, real_in).square().sum(2).mean(1);
    if (training_.loss == LossKind::kWganGp && training_.gp_lambda > 0.0) penalty = gradient_penalty(real, fake);
    const torch::Tensor attached = penalty.defined() ? losses.attached + penalty : losses.attached;
    if (penalty.defined()) {
      losses.per_member = losses.per_member + penalty.detach();
      losses.total = losses.total + penalty.sum();
    }
    backward_and_step(*discs_, attached, losses.total, d_scaler_);
    d_watch_.note(losses.per_member, summing_);
  }

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

  // d D / d x at `x` (a leaf), kept in the graph for a second backward.
  static torch::Tensor input_gradient(const torch::Tensor& d_x, const torch::Tensor& x) {
    return torch::autograd::grad({d_x.sum()}, {x}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                                 /*create_graph=*/true)[0];
  }

  // WGAN-GP's term per member on its interpolates, one e ~ U[0, 1) per row
  // drawn, member after member, from its cell's stream (train()
  // draws them from Torch's global generator seeded alike).
  torch::Tensor gradient_penalty(const torch::Tensor& real, const torch::Tensor& fake) {
    std::vector<torch::Tensor> e;
    for (const Member& m : d_members_) e.push_back(torch::rand({real.size(1), 1}, streams_[m.cell], torch::kFloat32));
    const torch::Tensor share = torch::stack(e).to(data_.device());
    const torch::Tensor x = (share * real.detach() + (1.0 - share) * fake.detach()).requires_grad_(true);
    const torch::Tensor grad = input_gradient(discs_->forward(x), x);
    return training_.gp_lambda * (grad.norm(/*p=*/2, /*dim=*/2) - 1.0).square().mean(1);
  }

  void finish();

  // Per cell, seeded from work.global_seed as train() seeds Torch's global
  // generator: what dropout and WGAN-GP's interpolation shares draw from.
  static std::vector<at::Generator> cell_streams(const std::vector<LockstepCell>& cells) {
    std::vector<at::Generator> streams;
    for (const LockstepCell& c : cells) streams.push_back(at::detail::createCPUGenerator(c.work->global_seed));
    return streams;
  }

  std::vector<at::Generator> member_streams(const std::vector<Member>& members) const {
    std::vector<at::Generator> streams;
    for (const Member& m : members) streams.push_back(streams_[m.cell]);
    return streams;
  }

  const TrainingConfig& training_;
  const TrainingData& data_;
  std::int64_t latent_dim_;
  const std::vector<LockstepCell>& cells_;
  std::vector<Member> g_members_, d_members_;
  std::unique_ptr<StackedMembers> gens_, discs_;
  std::vector<at::Generator> streams_;  // per cell (cell_streams())
  Opponents g_opponents_, d_opponents_;
  std::vector<torch::Tensor> orders_;
  std::chrono::milliseconds delay_{0};
  std::vector<double> mutating_;
  bool summing_;
  bool shared_data_;  // every cell trains on `data_`
  StackWatch g_watch_, d_watch_;
  std::optional<StackedLossScaler> g_scaler_, d_scaler_;  // training.precision fp16
};

// The watches read once; what train() leaves in each working set.
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
  for (std::size_t p = 0; p < members.size(); ++p) {
    const LockstepCell& c = cells[members[p].cell];
    stack.source_cell[p] = c.cell;
    copies_of(c, role).push_back(stack.to_individual(static_cast<std::int64_t>(p)));
  }
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
  // Each stack freed once written back, so at most one role is held twice.
  write_back(*gens_, g_members_, cells_, Role::kGenerator);
  gens_.reset();
  write_back(*discs_, d_members_, cells_, Role::kDiscriminator);
  discs_.reset();
}

}  // namespace

bool trains_in_lockstep(const NetworkShape& shape) { return is_stacked(shape.kind); }

std::vector<double> train_in_lockstep(const TrainingConfig& training, const TrainingData& data, std::int64_t batches,
                                      std::int64_t latent_dim, const std::vector<LockstepCell>& cells) {
  if (cells.empty()) return {};
  const NetworkShape& shape = cells.front().work->selected_generators.front().shape();
  if (!trains_in_lockstep(shape))
    throw std::invalid_argument("train_in_lockstep: this configuration trains one member at a time (train())");
  Lockstep lockstep(training, data, latent_dim, cells);
  lockstep.run(batches);
  return lockstep.mutating();
}

}  // namespace cellgan
