// Individuals: construction, deep copies and the flat byte form.
#include "common/nn/individual.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include "common/bytes.h"

namespace cellgan {
namespace {

constexpr std::uint32_t kMagic = 0x49434731;  // "ICG1"

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

void put_tensor(ByteWriter& w, const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::TensorOptions().device(torch::kCPU).dtype(torch::kFloat32)).contiguous();
  w.put<std::uint64_t>(static_cast<std::uint64_t>(c.numel()));
  w.put_raw(c.data_ptr<float>(), static_cast<std::size_t>(c.numel()) * sizeof(float));
}

// Reads the value count of a tensor written by put_tensor and checks it
// against the tensor it stands for.
std::uint64_t get_tensor_size(ByteReader& r, const torch::Tensor& like) {
  const auto n = r.get<std::uint64_t>();
  if (n != static_cast<std::uint64_t>(like.numel()))
    throw InputError(r.what() + ": a tensor has " + std::to_string(n) + " values, expected " +
                     std::to_string(like.numel()) + " (network shapes differ)");
  return n;
}

// Reads into an existing tensor of the expected size.
void get_tensor(ByteReader& r, torch::Tensor& into) {
  const std::uint64_t n = get_tensor_size(r, into);
  torch::Tensor buf = torch::empty({static_cast<std::int64_t>(n)}, torch::kFloat32);
  r.get_raw(buf.data_ptr<float>(), n * sizeof(float));
  torch::NoGradGuard no_grad;
  into.copy_(buf.view(into.sizes()));
}

// Passes over a tensor written by put_tensor.
void skip_tensor(ByteReader& r, const torch::Tensor& like) { r.skip(get_tensor_size(r, like) * sizeof(float)); }

}  // namespace

Individual::Individual(Role role, const NetworkShape& shape, AdamSettings adam, torch::Device device)
    : role_(role), shape_(shape), adam_(adam), device_(device) {
  if (role_ == Role::kGenerator) {
    generator_ = Generator(shape_);
  } else {
    discriminator_ = Discriminator(shape_);
  }
  if (!device_.is_cpu()) module().to(device_);
}

Individual::Individual(Role role, const NetworkShape& shape, double learning_rate, AdamSettings adam, LossKind loss,
                       torch::Device device)
    : Individual(role, shape, adam, device) {
  this->loss = loss;
  make_optimizer(learning_rate);
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
  std::size_t size = sizeof(std::uint32_t) + 2 * sizeof(std::uint8_t) + sizeof(std::int32_t) + 2 * sizeof(double) +
                     2 * sizeof(std::uint32_t);
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
  w.put<std::uint32_t>(kMagic);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(role_));
  w.put<std::uint8_t>(static_cast<std::uint8_t>(loss));
  w.put<std::int32_t>(source_cell);
  w.put<double>(learning_rate_);
  w.put<double>(fitness);
  const auto params = self.module().parameters();
  const auto buffers = self.module().buffers();
  w.put<std::uint32_t>(static_cast<std::uint32_t>(params.size()));
  w.put<std::uint32_t>(static_cast<std::uint32_t>(buffers.size()));
  for (const auto& p : params) put_tensor(w, p);
  for (const auto& b : buffers) put_tensor(w, b);
  auto& state = self.optimizer_->state();
  for (const auto& p : params) {
    auto it = with_optimizer_state ? state.find(state_key(p)) : state.end();
    if (it == state.end()) {
      w.put<std::int64_t>(-1);
      continue;
    }
    const auto& s = static_cast<const torch::optim::AdamParamState&>(*it->second);
    w.put<std::int64_t>(s.step());
    put_tensor(w, s.exp_avg());
    put_tensor(w, s.exp_avg_sq());
  }
}

Individual Individual::decode(const std::vector<std::uint8_t>& bytes, const NetworkShape& shape, AdamSettings adam,
                              bool with_optimizer_state, torch::Device device) {
  ByteReader r(bytes, "individual");
  if (r.get<std::uint32_t>() != kMagic) throw InputError("individual: bad magic number: not an encoded individual");
  const auto role = static_cast<Role>(r.get<std::uint8_t>());
  if (role != Role::kGenerator && role != Role::kDiscriminator) throw InputError("individual: unknown role");
  Individual ind(role, shape, adam, device);
  ind.loss = static_cast<LossKind>(r.get<std::uint8_t>());
  ind.source_cell = r.get<std::int32_t>();
  const double lr = r.get<double>();
  ind.fitness = r.get<double>();
  ind.make_optimizer(lr);
  auto params = ind.module().parameters();
  auto buffers = ind.module().buffers();
  if (r.get<std::uint32_t>() != params.size() || r.get<std::uint32_t>() != buffers.size())
    throw InputError("individual: tensor count differs from the configured network");
  for (auto& p : params) get_tensor(r, p);
  for (auto& b : buffers) get_tensor(r, b);
  auto& state = ind.optimizer_->state();
  for (auto& p : params) {
    const auto step = r.get<std::int64_t>();
    if (step < 0) continue;
    if (!with_optimizer_state) {
      skip_tensor(r, p);
      skip_tensor(r, p);
      continue;
    }
    auto s = std::make_unique<torch::optim::AdamParamState>();
    s->step(step);
    torch::Tensor m = torch::zeros_like(p, torch::MemoryFormat::Contiguous);
    torch::Tensor v = torch::zeros_like(p, torch::MemoryFormat::Contiguous);
    get_tensor(r, m);
    get_tensor(r, v);
    s->exp_avg(m);
    s->exp_avg_sq(v);
    state[state_key(p)] = std::move(s);
  }
  if (r.remaining() != 0) throw InputError("individual: trailing bytes after the encoded individual");
  return ind;
}

Individual Individual::clone() const { return decode(encode(), shape_, adam_, true, device_); }

Individual Individual::clone_weights() const {
  return decode(encode(/*with_optimizer_state=*/false), shape_, adam_, true, device_);
}

void Individual::release_gradients() {
  for (auto& p : module().parameters()) p.mutable_grad() = torch::Tensor();
}

bool Individual::is_finite() const {
  auto& self = const_cast<Individual&>(*this);
  if (!std::isfinite(learning_rate_)) return false;
  torch::NoGradGuard no_grad;
  // Every tensor's verdict on the device, then one read of them all.
  std::vector<torch::Tensor> finite;
  for (const auto& p : self.module().parameters()) finite.push_back(torch::isfinite(p).all());
  for (const auto& [key, st] : self.optimizer_->state()) {
    const auto& s = static_cast<const torch::optim::AdamParamState&>(*st);
    finite.push_back(torch::isfinite(s.exp_avg()).all());
    finite.push_back(torch::isfinite(s.exp_avg_sq()).all());
  }
  return finite.empty() || torch::stack(finite).all().item<bool>();
}

}  // namespace cellgan
