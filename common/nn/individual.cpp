// Individuals: construction, deep copies and the flat byte form.
#include "common/nn/individual.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/bytes.h"
#include "common/nn/grouped_reduction.h"

namespace cellgan {
namespace {

// Adam's state map is keyed by the parameter's TensorImpl: as its address
// printed to a string up to LibTorch 1.x, as the pointer itself from 2.0.
using StateMap = std::decay_t<decltype(std::declval<torch::optim::Adam&>().state())>;

template <typename Key>
Key state_key_of(const torch::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;
    key << static_cast<const void*>(p.unsafeGetTensorImpl());
    return key.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

StateMap::key_type state_key(const torch::Tensor& p) { return state_key_of<StateMap::key_type>(p); }

}  // namespace

Individual::Individual(Role role, const NetworkShape& shape, AdamSettings adam, torch::Device device,
                       InitialWeights weights)
    : role_(role), shape_(shape), adam_(adam), device_(device) {
  if (role_ == Role::kGenerator) {
    generator_ = Generator(shape_, weights);
  } else {
    discriminator_ = Discriminator(shape_, weights);
  }
  // Written by the caller when undrawn, every kind: no value is copied from the host.
  if (!device_.is_cpu()) place_on_device(module(), device_, weights == InitialWeights::kDrawn);
}

Individual::Individual(Role role, const NetworkShape& shape, double learning_rate, AdamSettings adam, LossKind loss,
                       torch::Device device)
    : Individual(role, shape, adam, device, InitialWeights::kDrawn) {
  this->loss = loss;
  make_optimizer(learning_rate);
}

Individual Individual::to_be_written(Role role, const NetworkShape& shape, double learning_rate, AdamSettings adam,
                                     LossKind loss, torch::Device device) {
  Individual ind(role, shape, adam, device, InitialWeights::kUndrawn);
  ind.loss = loss;
  ind.make_optimizer(learning_rate);
  return ind;
}

void Individual::make_optimizer(double lr) {
  learning_rate_ = lr;
  optimizer_ = std::make_unique<torch::optim::Adam>(
      module().parameters(), torch::optim::AdamOptions(lr).betas({adam_.beta1, adam_.beta2}));
}

Generator& Individual::generator() {
  TORCH_CHECK(role_ == Role::kGenerator, "not a generator");
  return generator_;
}

Discriminator& Individual::discriminator() {
  TORCH_CHECK(role_ == Role::kDiscriminator, "not a discriminator");
  return discriminator_;
}

torch::nn::Module& Individual::module() {
  if (role_ == Role::kGenerator) return *generator_;
  return *discriminator_;
}

void Individual::set_learning_rate(double lr) {
  learning_rate_ = lr;
  for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
}

void Individual::set_adam_learning_rate(double lr) {
  for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
}

double Individual::adam_learning_rate() const { return optimizer_->param_groups().front().options().get_lr(); }

std::size_t Individual::encoded_size_bound(bool with_optimizer_state) const {
  auto& self = const_cast<Individual&>(*this);
  // The header (see encode_to), then every parameter with its Adam state.
  std::size_t size = kIndividualHeaderBytes;
  const auto tensor_size = [](const torch::Tensor& t) {
    return sizeof(std::uint64_t) + static_cast<std::size_t>(t.numel()) * sizeof(float);
  };
  for (const auto& p : self.module().parameters())
    size += sizeof(std::int64_t) + (with_optimizer_state ? 3 : 1) * tensor_size(p);
  for (const auto& b : self.module().buffers()) size += tensor_size(b);
  return size;
}

std::vector<std::uint8_t> Individual::encode(bool with_optimizer_state) const {
  ByteWriter w;
  w.reserve(encoded_size_bound(with_optimizer_state));  // the few-MB buffer is allocated once
  encode_to(w, with_optimizer_state);
  return w.take();
}

void Individual::encode_to(ByteWriter& w, bool with_optimizer_state) const {
  auto& self = const_cast<Individual&>(*this);
  const auto params = self.module().parameters();
  const auto buffers = self.module().buffers();
  write_individual_header(w, {role_, loss, source_cell, learning_rate_, fitness,
                              static_cast<std::uint32_t>(params.size()), static_cast<std::uint32_t>(buffers.size())});
  for (const auto& p : params) write_individual_tensor(w, p);
  for (const auto& b : buffers) write_individual_tensor(w, b);
  auto& state = self.optimizer_->state();
  for (const auto& p : params) {
    auto it = with_optimizer_state ? state.find(state_key(p)) : state.end();
    if (it == state.end()) {
      w.put<std::int64_t>(-1);
      continue;
    }
    const auto& s = static_cast<const torch::optim::AdamParamState&>(*it->second);
    w.put<std::int64_t>(s.step());
    write_individual_tensor(w, s.exp_avg());
    write_individual_tensor(w, s.exp_avg_sq());
  }
}

Individual Individual::decode(const std::vector<std::uint8_t>& bytes, const NetworkShape& shape, AdamSettings adam,
                              bool with_optimizer_state, torch::Device device) {
  ByteReader r(bytes, "individual");
  const IndividualHeader header = read_individual_header(r);
  Individual ind(header.role, shape, adam, device, InitialWeights::kUndrawn);
  ind.loss = header.loss;
  ind.source_cell = header.source_cell;
  ind.fitness = header.fitness;
  ind.make_optimizer(header.learning_rate);
  auto params = ind.module().parameters();
  auto buffers = ind.module().buffers();
  if (header.parameter_count != params.size() || header.buffer_count != buffers.size())
    throw InputError("individual: tensor count differs from the configured network");
  for (auto& p : params) read_individual_tensor(r, p);
  for (auto& b : buffers) read_individual_tensor(r, b);
  auto& state = ind.optimizer_->state();
  for (auto& p : params) {
    const auto step = r.get<std::int64_t>();
    if (step < 0) continue;
    if (!with_optimizer_state) {
      skip_individual_tensor(r, p);
      skip_individual_tensor(r, p);
      continue;
    }
    auto s = std::make_unique<torch::optim::AdamParamState>();
    s->step(step);
    torch::Tensor m = torch::zeros_like(p, torch::MemoryFormat::Contiguous);
    torch::Tensor v = torch::zeros_like(p, torch::MemoryFormat::Contiguous);
    read_individual_tensor(r, m);
    read_individual_tensor(r, v);
    s->exp_avg(m);
    s->exp_avg_sq(v);
    state[state_key(p)] = std::move(s);
  }
  if (r.remaining() != 0) throw InputError("individual: trailing bytes after the encoded individual");
  return ind;
}

Individual Individual::clone() const { return copy(MomentsCopy::kCopied, false); }

Individual Individual::clone_weights() const { return copy(MomentsCopy::kFresh, false); }

Individual Individual::snapshot() const { return copy(MomentsCopy::kShared, true); }

Individual Individual::snapshot_weights() const { return copy(MomentsCopy::kFresh, true); }

Individual Individual::copy(MomentsCopy moments_copy, bool share_weights) const {
  auto& self = const_cast<Individual&>(*this);
  Individual ind(role_, shape_, adam_, device_, InitialWeights::kUndrawn);  // as decode() makes it
  ind.loss = loss;
  ind.source_cell = source_cell;
  ind.fitness = fitness;
  ind.make_optimizer(learning_rate_);
  torch::NoGradGuard no_grad;
  const auto params = self.module().parameters();
  auto into = ind.module().parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (share_weights)
      into[i].set_data(params[i].detach());  // the handle is the copy's own (its Adam's key), the storage shared
    else
      into[i].copy_(params[i]);
  }
  const auto buffers = self.module().buffers();
  auto buffers_into = ind.module().buffers();
  for (std::size_t i = 0; i < buffers.size(); ++i) buffers_into[i].copy_(buffers[i]);
  for (std::size_t i = 0; moments_copy != MomentsCopy::kFresh && i < params.size(); ++i) {
    const std::optional<Moments> m = moments(i);
    if (!m) continue;
    if (moments_copy == MomentsCopy::kShared)
      ind.set_moments(i, *m);
    else
      ind.set_moments(i, {m->step, m->exp_avg.clone(torch::MemoryFormat::Contiguous),
                          m->exp_avg_sq.clone(torch::MemoryFormat::Contiguous)});
  }
  return ind;
}

std::optional<Individual::Moments> Individual::moments(std::size_t i) const {
  auto& self = const_cast<Individual&>(*this);
  const auto params = self.module().parameters();
  auto& state = self.optimizer_->state();
  const auto it = state.find(state_key(params.at(i)));
  if (it == state.end()) return std::nullopt;
  const auto& s = static_cast<const torch::optim::AdamParamState&>(*it->second);
  return Moments{s.step(), s.exp_avg(), s.exp_avg_sq()};
}

void Individual::set_moments(std::size_t i, Moments m) {
  const auto params = module().parameters();
  auto s = std::make_unique<torch::optim::AdamParamState>();
  s->step(m.step);
  s->exp_avg(std::move(m.exp_avg));
  s->exp_avg_sq(std::move(m.exp_avg_sq));
  optimizer_->state()[state_key(params.at(i))] = std::move(s);
}

void Individual::release_gradients() {
  for (auto& p : module().parameters()) p.mutable_grad() = torch::Tensor();
}

bool Individual::is_finite() const { return are_finite({this}).front(); }

namespace {

// An individual's parameters and Adam moments, flattened.
std::vector<torch::Tensor> flat_state(torch::nn::Module& module, torch::optim::Adam& adam) {
  std::vector<torch::Tensor> flat;
  for (const auto& p : module.parameters()) flat.push_back(p.reshape(-1));
  for (const auto& [key, st] : adam.state()) {
    const auto& s = static_cast<const torch::optim::AdamParamState&>(*st);
    flat.push_back(s.exp_avg().reshape(-1));
    flat.push_back(s.exp_avg_sq().reshape(-1));
  }
  return flat;
}

// Each of `groups` reduced to one value on its device, read with one wait:
// on the CPU `combine` of each tensor's `reduce` where it lies (no copy);
// elsewhere the groups of equal size put together and reduced row by row
// with `reduce_rows` (reduce_groups_by_size()), a few kernels for them all.
template <typename Reduce, typename Combine, typename ReduceRows>
torch::Tensor reduced_on_host(const std::vector<std::vector<torch::Tensor>>& groups, const Reduce& reduce,
                              const Combine& combine, const ReduceRows& reduce_rows) {
  if (!groups.front().front().device().is_cpu()) return reduce_groups_by_size(groups, reduce_rows);
  std::vector<torch::Tensor> values;
  for (const std::vector<torch::Tensor>& flat : groups) {
    std::vector<torch::Tensor> each;
    for (const torch::Tensor& t : flat) each.push_back(reduce(t));
    values.push_back(combine(torch::stack(each)));
  }
  return torch::stack(values).contiguous();
}

}  // namespace

std::vector<bool> Individual::are_finite(const std::vector<const Individual*>& individuals) {
  torch::NoGradGuard no_grad;
  std::vector<bool> finite(individuals.size(), false);
  std::vector<std::vector<torch::Tensor>> states;  // of each individual with a finite lr and some tensor
  std::vector<std::size_t> judged;                 // whose state each is
  for (std::size_t i = 0; i < individuals.size(); ++i) {
    auto& x = const_cast<Individual&>(*individuals[i]);
    if (!std::isfinite(x.learning_rate_)) continue;
    std::vector<torch::Tensor> flat = flat_state(x.module(), *x.optimizer_);
    if (flat.empty()) {
      finite[i] = true;
      continue;
    }
    states.push_back(std::move(flat));
    judged.push_back(i);
  }
  if (states.empty()) return finite;
  // A sum is far faster than isfinite(), and finite when every value is,
  // unless finite values overflow: a sum that is not finite is looked at
  // again, value by value.
  const auto sum = [](const torch::Tensor& t) { return t.sum(); };
  const torch::Tensor sums = reduced_on_host(states, sum, sum, [](const torch::Tensor& rows) { return rows.sum(1); });
  std::vector<std::vector<torch::Tensor>> doubtful;
  std::vector<std::size_t> which;
  for (std::size_t k = 0; k < judged.size(); ++k) {
    if (std::isfinite(sums[static_cast<std::int64_t>(k)].item<float>())) {
      finite[judged[k]] = true;
    } else {
      doubtful.push_back(std::move(states[k]));
      which.push_back(judged[k]);
    }
  }
  if (doubtful.empty()) return finite;
  const torch::Tensor exact = reduced_on_host(
      doubtful, [](const torch::Tensor& t) { return torch::isfinite(t).all(); },
      [](const torch::Tensor& t) { return t.all(); },
      [](const torch::Tensor& rows) { return torch::isfinite(rows).all(1); });
  for (std::size_t k = 0; k < which.size(); ++k) finite[which[k]] = exact[static_cast<std::int64_t>(k)].item<bool>();
  return finite;
}

}  // namespace cellgan
