// Stacked individuals as rows (stacked_networks.h): construction, learning
// rates, and a row to and from the Individual byte form.
#include "common/nn/stacked_networks.h"

#include <torch/torch.h>

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/nn/individual_bytes.h"

namespace cellgan {
namespace {

// One row's tensors read from bytes, in the individual's layout, before
// they are written into the stack.
struct RowTensors {
  std::vector<torch::Tensor> params;
  std::vector<torch::Tensor> buffers;
  std::int64_t step = -1;  // -1: no Adam state
  std::vector<torch::Tensor> exp_avg;
  std::vector<torch::Tensor> exp_avg_sq;
};

// A member's tensor read on the host; pinned when it goes to a GPU, so that
// set_member_row() copies it there without a wait.
torch::Tensor read_member_tensor(ByteReader& r, const StackedTensor& layout) {
  torch::Tensor t = torch::empty(layout.member_sizes,
                                 torch::TensorOptions(torch::kFloat32).pinned_memory(layout.stacked.is_cuda()));
  read_individual_tensor(r, t);
  return t;
}

// A member's one Adam step count (-1: no state), given parameter i's
// `step` (negative: none) and the count of the parameters before it.
std::int64_t one_step_count(std::size_t i, std::int64_t so_far, std::int64_t step) {
  const std::int64_t normalised = step < 0 ? -1 : step;
  if (i > 0 && normalised != so_far)
    throw InputError("individual: its tensors' Adam step counts differ (" + std::to_string(so_far) + " and " +
                     std::to_string(step) + "); a stack keeps one per member");
  return normalised;
}

// The Adam states of all parameters: one step count for all, or none.
void read_adam_states(ByteReader& r, const std::vector<StackedTensor>& params, RowTensors& row) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto step = r.get<std::int64_t>();
    row.step = one_step_count(i, row.step, step);
    if (step < 0) continue;
    row.exp_avg.push_back(read_member_tensor(r, params[i]));
    row.exp_avg_sq.push_back(read_member_tensor(r, params[i]));
  }
}

}  // namespace

StackedMembers::StackedMembers(Role role, const NetworkShape& shape, std::int64_t members, double learning_rate,
                               AdamSettings adam, LossKind loss_kind, torch::Device device, InitialWeights weights)
    : fitness(static_cast<std::size_t>(members), std::numeric_limits<double>::quiet_NaN()),
      loss(static_cast<std::size_t>(members), loss_kind),
      source_cell(static_cast<std::size_t>(members), -1),
      role_(role),
      shape_(shape),
      members_(members),
      adam_(adam),
      device_(device),
      network_(StackedNetwork(role, shape, members, weights)),
      learning_rates_(static_cast<std::size_t>(members), learning_rate) {
  if (!device_.is_cpu()) place_on_device(*network_, device_, network_->drawn());
  std::vector<torch::Tensor> params;
  for (const StackedTensor& t : network_->parameter_tensors()) params.push_back(t.stacked);
  BatchedAdamOptions options{adam.beta1, adam.beta2};
  // A GPU launches a kernel for each operation: there the stack's Adam
  // takes one buffer (a dozen kernels a step instead of about nine a
  // tensor). The CPU has no launches to save, and there the gathers of
  // the one-buffer step made mnist-2x2 1.4x slower.
  options.one_buffer = device_.is_cuda();
  optimizer_ = std::make_unique<BatchedAdam>(std::move(params), learning_rate, options);
}

void StackedMembers::check_member(std::int64_t p, const char* what) const {
  if (p < 0 || p >= members_)
    throw std::out_of_range(fmt::format("StackedMembers::{}: member {} outside a stack of {}", what, p, members_));
}

void StackedMembers::release_gradients() {
  for (torch::Tensor& p : network_->parameters()) p.mutable_grad() = torch::Tensor();
}

double StackedMembers::learning_rate(std::int64_t p) const {
  check_member(p, "learning_rate");
  return learning_rates_[static_cast<std::size_t>(p)];
}

void StackedMembers::set_learning_rate(std::int64_t p, double lr) {
  check_member(p, "set_learning_rate");
  learning_rates_[static_cast<std::size_t>(p)] = lr;
  optimizer_->set_learning_rate(p, lr);
}

void StackedMembers::set_adam_learning_rate(std::int64_t p, double lr) {
  check_member(p, "set_adam_learning_rate");
  optimizer_->set_learning_rate(p, lr);
}

void StackedMembers::set_learning_rates(const std::vector<double>& own, const std::vector<double>& adam) {
  if (static_cast<std::int64_t>(own.size()) != members_)
    throw std::invalid_argument(
        fmt::format("StackedMembers::set_learning_rates: {} rates for {} members", own.size(), members_));
  optimizer_->set_learning_rates(adam);
  learning_rates_ = own;
}

std::vector<double> StackedMembers::adam_learning_rates() const {
  const torch::Tensor host = optimizer_->learning_rates().cpu().contiguous();
  return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
}

void StackedMembers::load_row(std::int64_t p, const Individual& individual) {
  if (individual.role() != role_) throw std::invalid_argument("StackedMembers::load_row: the individual's role differs");
  check_member(p, "load_row");
  auto& from = const_cast<Individual&>(individual);
  const std::vector<StackedTensor> params = network_->parameter_tensors();
  const std::vector<StackedTensor> buffers = network_->buffer_tensors();
  const std::vector<torch::Tensor> own_params = from.module().parameters();
  const std::vector<torch::Tensor> own_buffers = from.module().buffers();
  if (own_params.size() != params.size() || own_buffers.size() != buffers.size())
    throw std::invalid_argument("StackedMembers::load_row: the individual's network differs from the stack's");
  // Device to device, as load_row(p, individual.encode()) would write it.
  std::vector<std::optional<Individual::Moments>> moments;
  std::int64_t step = -1;
  for (std::size_t i = 0; i < params.size(); ++i) {
    moments.push_back(individual.moments(i));
    step = one_step_count(i, step, moments.back() ? moments.back()->step : -1);
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    set_member_row(params[i], params[i].stacked, p, own_params[i]);
    const std::optional<Individual::Moments>& m = moments[i];
    set_member_row(params[i], optimizer_->exp_avg()[i], p, m ? m->exp_avg : torch::zeros(params[i].member_sizes));
    set_member_row(params[i], optimizer_->exp_avg_sq()[i], p,
                   m ? m->exp_avg_sq : torch::zeros(params[i].member_sizes));
  }
  for (std::size_t i = 0; i < buffers.size(); ++i) set_member_row(buffers[i], buffers[i].stacked, p, own_buffers[i]);
  optimizer_->set_step(p, std::max<std::int64_t>(step, 0));
  const auto row_index = static_cast<std::size_t>(p);
  loss[row_index] = individual.loss;
  source_cell[row_index] = individual.source_cell;
  fitness[row_index] = individual.fitness;
  set_learning_rate(p, individual.learning_rate());
  optimizer_->set_learning_rate(p, individual.adam_learning_rate());
}

void StackedMembers::load_rows(const std::vector<const Individual*>& individuals) {
  if (static_cast<std::int64_t>(individuals.size()) != members_)
    throw std::invalid_argument(
        fmt::format("StackedMembers::load_rows: {} individuals for {} members", individuals.size(), members_));
  for (const Individual* individual : individuals)
    if (individual->role() != role_)
      throw std::invalid_argument("StackedMembers::load_rows: an individual's role differs");
  load_weights(*network_, individuals);
  const std::vector<StackedTensor> params = network_->parameter_tensors();
  // Per tensor, every member's moments (zeros where it has none).
  std::vector<std::vector<torch::Tensor>> exp_avg(params.size()), exp_avg_sq(params.size());
  std::vector<std::int64_t> steps;
  std::vector<double> own_rates, adam_rates;
  for (const Individual* individual : individuals) {
    std::int64_t step = -1;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const std::optional<Individual::Moments> m = individual->moments(i);
      step = one_step_count(i, step, m ? m->step : -1);
      const auto zeros = [&] { return torch::zeros(params[i].member_sizes, params[i].stacked.options()); };
      exp_avg[i].push_back(m ? m->exp_avg : zeros());
      exp_avg_sq[i].push_back(m ? m->exp_avg_sq : zeros());
    }
    steps.push_back(std::max<std::int64_t>(step, 0));
    own_rates.push_back(individual->learning_rate());
    adam_rates.push_back(individual->adam_learning_rate());
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    set_member_rows(params[i], optimizer_->exp_avg()[i], 0, exp_avg[i]);
    set_member_rows(params[i], optimizer_->exp_avg_sq()[i], 0, exp_avg_sq[i]);
  }
  optimizer_->set_steps(steps);
  set_learning_rates(own_rates, adam_rates);
  for (std::size_t p = 0; p < individuals.size(); ++p) {
    loss[p] = individuals[p]->loss;
    source_cell[p] = individuals[p]->source_cell;
    fitness[p] = individuals[p]->fitness;
  }
}

void StackedMembers::load_row(std::int64_t p, const Bytes& bytes) {
  check_member(p, "load_row");
  ByteReader r(bytes, "individual");
  const IndividualHeader header = read_individual_header(r);
  if (header.role != role_)
    throw InputError(fmt::format("individual: a {} where the stack holds {}s",
                                 header.role == Role::kGenerator ? "generator" : "discriminator",
                                 role_ == Role::kGenerator ? "generator" : "discriminator"));
  const std::vector<StackedTensor> params = network_->parameter_tensors();
  const std::vector<StackedTensor> buffers = network_->buffer_tensors();
  if (header.parameter_count != params.size() || header.buffer_count != buffers.size())
    throw InputError("individual: tensor count differs from the configured network");
  RowTensors row;
  for (const StackedTensor& t : params) row.params.push_back(read_member_tensor(r, t));
  for (const StackedTensor& t : buffers) row.buffers.push_back(read_member_tensor(r, t));
  read_adam_states(r, params, row);
  if (r.remaining() != 0) throw InputError("individual: trailing bytes after the encoded individual");
  // Everything read and checked: now the row changes.
  for (std::size_t i = 0; i < params.size(); ++i) {
    set_member_row(params[i], params[i].stacked, p, row.params[i]);
    const bool has_state = row.step >= 0;
    set_member_row(params[i], optimizer_->exp_avg()[i], p,
                   has_state ? row.exp_avg[i] : torch::zeros(params[i].member_sizes));
    set_member_row(params[i], optimizer_->exp_avg_sq()[i], p,
                   has_state ? row.exp_avg_sq[i] : torch::zeros(params[i].member_sizes));
  }
  for (std::size_t i = 0; i < buffers.size(); ++i) set_member_row(buffers[i], buffers[i].stacked, p, row.buffers[i]);
  optimizer_->set_step(p, std::max<std::int64_t>(row.step, 0));
  const auto row_index = static_cast<std::size_t>(p);
  loss[row_index] = header.loss;
  source_cell[row_index] = header.source_cell;
  fitness[row_index] = header.fitness;
  set_learning_rate(p, header.learning_rate);
}

Bytes StackedMembers::row_bytes(std::int64_t p, bool with_optimizer_state) const {
  check_member(p, "row_bytes");
  const std::vector<StackedTensor> params = network_->parameter_tensors();
  const std::vector<StackedTensor> buffers = network_->buffer_tensors();
  const auto row_index = static_cast<std::size_t>(p);
  const std::int64_t step = optimizer_->steps()[p].item<std::int64_t>();
  const bool with_state = with_optimizer_state && step > 0;
  std::size_t size = kIndividualHeaderBytes;
  const auto tensor_size = [](const StackedTensor& t) {
    std::int64_t n = 1;
    for (const std::int64_t s : t.member_sizes) n *= s;
    return sizeof(std::uint64_t) + static_cast<std::size_t>(n) * sizeof(float);
  };
  for (const StackedTensor& t : params) size += sizeof(std::int64_t) + (with_state ? 3 : 1) * tensor_size(t);
  for (const StackedTensor& t : buffers) size += tensor_size(t);
  ByteWriter w;
  w.reserve(size);
  write_individual_header(w, {role_, loss[row_index], source_cell[row_index], learning_rates_[row_index],
                              fitness[row_index], static_cast<std::uint32_t>(params.size()),
                              static_cast<std::uint32_t>(buffers.size())});
  for (const StackedTensor& t : params) write_individual_tensor(w, member_row(t, t.stacked, p));
  for (const StackedTensor& t : buffers) write_individual_tensor(w, member_row(t, t.stacked, p));
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!with_state) {
      w.put<std::int64_t>(-1);
      continue;
    }
    w.put<std::int64_t>(step);
    write_individual_tensor(w, member_row(params[i], optimizer_->exp_avg()[i], p));
    write_individual_tensor(w, member_row(params[i], optimizer_->exp_avg_sq()[i], p));
  }
  return w.take();
}

Individual StackedMembers::to_individual(std::int64_t p) const {
  check_member(p, "to_individual");
  return row_individual(p, optimizer_->steps()[p].item<std::int64_t>(),
                        optimizer_->learning_rates()[p].item<double>());
}

std::vector<Individual> StackedMembers::to_individuals() const {
  const torch::Tensor steps = optimizer_->steps().cpu().contiguous();
  const std::vector<double> rates = adam_learning_rates();
  std::vector<Individual> out;
  out.reserve(static_cast<std::size_t>(members_));
  for (std::int64_t p = 0; p < members_; ++p)
    out.push_back(row_individual(p, steps.data_ptr<std::int64_t>()[p], rates[static_cast<std::size_t>(p)]));
  return out;
}

Individual StackedMembers::row_individual(std::int64_t p, std::int64_t step, double adam_learning_rate) const {
  const auto row_index = static_cast<std::size_t>(p);
  // Device to device, as Individual::decode(row_bytes(p)) would make it.
  Individual individual =
      Individual::to_be_written(role_, shape_, learning_rates_[row_index], adam_, loss[row_index], device_);
  individual.source_cell = source_cell[row_index];
  individual.fitness = fitness[row_index];
  const std::vector<StackedTensor> params = network_->parameter_tensors();
  const std::vector<StackedTensor> buffers = network_->buffer_tensors();
  std::vector<torch::Tensor> own_params = individual.module().parameters();
  std::vector<torch::Tensor> own_buffers = individual.module().buffers();
  {
    torch::NoGradGuard no_grad;
    // The row's own copy becomes the tensor's storage (one copy, not two).
    for (std::size_t i = 0; i < params.size(); ++i) own_params[i].set_data(member_row(params[i], params[i].stacked, p));
    for (std::size_t i = 0; i < buffers.size(); ++i)
      own_buffers[i].set_data(member_row(buffers[i], buffers[i].stacked, p));
  }
  for (std::size_t i = 0; step > 0 && i < params.size(); ++i)
    individual.set_moments(i, {step, member_row(params[i], optimizer_->exp_avg()[i], p),
                               member_row(params[i], optimizer_->exp_avg_sq()[i], p)});
  individual.set_adam_learning_rate(adam_learning_rate);
  return individual;
}

}  // namespace cellgan
