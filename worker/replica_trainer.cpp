// One replica of the data-parallel layout (see replica_trainer.h).
#include "worker/replica_trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>

#include <fmt/core.h>

#include "common/bytes.h"
#include "common/error.h"
#include "common/nn/device.h"
#include "common/nn/losses.h"
#include "common/nn/member_draws.h"
#include "common/nn/stacked_penalties.h"
#include "common/nn/precision.h"
#include "common/step_schedule.h"
#include "common/rng.h"
#include "worker/gradient_fusion.h"
#include "worker/lockstep_parts.h"

namespace cellgan {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr std::uint32_t kPairMagic = 0x52504c43;  // "CLPR"
constexpr int kGeneratorRole = 0;
constexpr int kDiscriminatorRole = 1;

AdamSettings adam_of(const Config& c) { return {c.training.adam_beta1, c.training.adam_beta2}; }

// The generator is built first, from Torch's global generator seeded from
// the run's seed, so both networks come from it.
StackedGenerator build_generator(const Config& c, torch::Device device) {
  torch::manual_seed(derive_seed(c.seed, Stream::kReplicaInit));
  return StackedGenerator(network_shape(c), 1, c.training.learning_rate, adam_of(c), c.training.loss, device);
}

StackedDiscriminator build_discriminator(const Config& c, torch::Device device) {
  return StackedDiscriminator(network_shape(c), 1, c.training.learning_rate, adam_of(c),
                              discriminator_loss_for(c.training.loss), device);
}

// The sum, in order, of one step's micro-batch losses (as the doubles
// item() would read).
double sum_in_order(const std::vector<torch::Tensor>& losses) {
  double sum = 0.0;
  for (double v : host_values(losses)) sum += v;
  return sum;
}

std::vector<torch::Tensor> gradients_of(StackedMembers& net) {
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : net.optimizer().params()) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.mutable_grad());
  }
  return grads;
}

}  // namespace

ReplicaTrainer::ReplicaTrainer(const Config& config, const TrainingData& data, int rank, int workers)
    : config_(config),
      data_(data),
      rank_(rank),
      workers_(workers),
      generator_(build_generator(config, data.device())),
      discriminator_(build_discriminator(config, data.device())),
      stream_(generator_on(data.device(), derive_seed(config.seed, Stream::kReplicaStep))) {
  if (config.training.loss == LossKind::kMustangs)
    throw InputError(fmt::format("{}: training.loss: mustangs draws a loss per generator of a population: expected "
                                 "bce, mse or heuristic for layout data_parallel",
                                 config.source));
  if (workers < 1 || rank < 0 || rank >= workers)
    throw std::logic_error(fmt::format("ReplicaTrainer: rank {} of {} workers", rank, workers));
  const std::int64_t b = config.training.batch_size;
  global_rows_ = config.data_parallel.scaling == BatchScaling::kWeak ? b * workers : b;
  global_rows_ = std::min(global_rows_, data.size());
  if (global_rows_ < workers)
    throw InputError(fmt::format("{}: training.batch_size: a global batch of {} rows cannot be split over {} workers: "
                                 "expected at least one row each",
                                 config.source, global_rows_, workers));
  check_precision(config, data.device());
  if (config.training.precision == Precision::kFp16 && config.data_parallel.shard_optimizer)
    throw InputError(fmt::format("{}: training.precision: fp16 with data_parallel.shard_optimizer is not supported: "
                                 "expected fp32 or bf16 with a sharded optimizer",
                                 config.source));
  shard_begin_ = global_rows_ * rank / workers;
  shard_end_ = global_rows_ * (rank + 1) / workers;
  weight_ = static_cast<double>(shard_end_ - shard_begin_) / static_cast<double>(global_rows_);
  generator_.network()->set_member_generators({stream_});
  discriminator_.network()->set_member_generators({stream_});
}

torch::Tensor ReplicaTrainer::shard_index(std::int64_t micro) {
  const std::int64_t per_epoch = std::max<std::int64_t>(1, data_.size() / global_rows_);
  const std::int64_t epoch = micro / per_epoch;
  if (epoch != order_epoch_) {
    torch::Generator gen = at::detail::createCPUGenerator(
        derive_seed(config_.seed, Stream::kReplicaOrder, static_cast<std::uint64_t>(epoch)));
    order_ = torch::randperm(data_.size(), gen, torch::kLong).to(data_.device());
    order_epoch_ = epoch;
  }
  const std::int64_t first = (micro % per_epoch) * global_rows_;
  return order_.narrow(0, first + shard_begin_, shard_end_ - shard_begin_);
}

void ReplicaTrainer::seed_micro_batch(std::int64_t micro, int role) {
  const auto index = (static_cast<std::uint64_t>(micro) << 17) | (static_cast<std::uint64_t>(rank_) << 1) |
                     static_cast<std::uint64_t>(role);
  const std::lock_guard<std::mutex> lock(stream_.mutex());
  stream_.set_current_seed(derive_seed(config_.seed, Stream::kReplicaStep, index));
}

torch::Tensor ReplicaTrainer::latent_batch() {
  return torch::randn({1, shard_rows(), generator_.shape().latent_dim}, stream_, on_device());
}

std::optional<Interruption> ReplicaTrainer::reduce_gradients(StackedMembers& net, std::vector<torch::Tensor> losses,
                                                             double& tally, GradientAllreduce& reduce) {
  if (workers_ > 1) {  // alone, the sum is what this worker has: no packing
    const auto began = Clock::now();
    std::vector<torch::Tensor> tensors = gradients_of(net);
    // The all-reduce needs the loss on the host anyway.
    torch::Tensor extra = torch::full({1}, static_cast<float>(sum_in_order(losses)),
                                      torch::TensorOptions().device(net.device()).dtype(torch::kFloat32));
    tensors.push_back(extra);
    if (auto interruption = allreduce_fused(tensors, config_.data_parallel.fusion_bytes, reduce)) return interruption;
    tally += static_cast<double>(extra.item<float>());
    tally_.communicate_seconds += seconds_since(began);
  } else {
    // Read at take_tally(): the step does not wait for the device.
    pending_losses_.push_back({&tally, std::move(losses)});
  }
  return std::nullopt;
}

void ReplicaTrainer::backward(const torch::Tensor& loss, const LossScaler& scaler) const {
  if (config_.training.precision == Precision::kFp16)
    scaler.scale(loss).backward();
  else
    loss.backward();
}

std::optional<Interruption> ReplicaTrainer::reduce_and_step(StackedMembers& net, std::unique_ptr<ShardedAdam>& shard,
                                                            std::vector<torch::Tensor> losses, double& tally,
                                                            GradientAllreduce& reduce, double& computing) {
  if (sharded()) return sharded_step(net, shard, std::move(losses), tally, reduce);
  if (auto interruption = reduce_gradients(net, std::move(losses), tally, reduce)) return interruption;
  if (config_.training.precision == Precision::kFp16) {  // the sum of scaled gradients: unscaled, or skipped
    LossScaler& scaler = &net == &generator_ ? generator_scaler_ : discriminator_scaler_;
    const bool finite = scaler.unscale(gradients_of(net));
    scaler.update(finite);
    if (!finite) {
      ++tally_.skipped_steps;
      return std::nullopt;
    }
  }
  if (config_.data_parallel.clip_grad_norm > 0.0)
    torch::nn::utils::clip_grad_norm_(net.optimizer().params(), config_.data_parallel.clip_grad_norm);
  const auto began = Clock::now();
  net.optimizer().step();
  computing += seconds_since(began);
  return std::nullopt;
}

std::optional<Interruption> ReplicaTrainer::sharded_step(StackedMembers& net, std::unique_ptr<ShardedAdam>& shard,
                                                         std::vector<torch::Tensor> losses, double& tally,
                                                         GradientAllreduce& reduce) {
  const auto began = Clock::now();
  if (!shard) shard = std::make_unique<ShardedAdam>(net, config_.data_parallel.fusion_bytes, rank_, workers_);
  float loss = static_cast<float>(sum_in_order(losses));
  if (auto interruption = shard->step(reduce, loss, config_.data_parallel.clip_grad_norm)) return interruption;
  tally += static_cast<double>(loss);
  tally_.communicate_seconds += seconds_since(began);  // the shard's Adam step included
  return std::nullopt;
}

std::optional<Interruption> ReplicaTrainer::gather_optimizer(WorkerExchange& exchange) {
  for (auto* shard : {&generator_shard_, &discriminator_shard_})
    if (*shard)
      if (auto interruption = (*shard)->gather(exchange)) return interruption;
  return std::nullopt;
}

void ReplicaTrainer::release_gathered_optimizer() {
  for (auto* shard : {&generator_shard_, &discriminator_shard_})
    if (*shard) (*shard)->release();
}

std::int64_t ReplicaTrainer::optimizer_state_bytes() {
  std::int64_t bytes = 0;
  if (sharded()) {
    for (auto* shard : {&generator_shard_, &discriminator_shard_})
      if (*shard) bytes += (*shard)->state_bytes();
    return bytes;
  }
  for (StackedMembers* net : {static_cast<StackedMembers*>(&generator_), static_cast<StackedMembers*>(&discriminator_)})
    if (net->optimizer().steps()[0].item<std::int64_t>() > 0)
      for (const torch::Tensor& m : net->optimizer().exp_avg()) bytes += 2 * m.numel() * 4;
  return bytes;
}

std::optional<Interruption> ReplicaTrainer::average_buffers(GradientAllreduce& reduce) {
  std::vector<torch::Tensor> buffers;
  for (StackedMembers* net : {static_cast<StackedMembers*>(&generator_), static_cast<StackedMembers*>(&discriminator_)})
    for (const StackedTensor& b : net->network()->buffer_tensors())
      if (b.stacked.scalar_type() == torch::kFloat32) buffers.push_back(b.stacked);
  if (buffers.empty() || workers_ == 1) return std::nullopt;
  const auto began = Clock::now();
  torch::NoGradGuard no_grad;
  for (torch::Tensor& b : buffers) b.mul_(weight_);
  if (auto interruption = allreduce_fused(buffers, config_.data_parallel.fusion_bytes, reduce)) return interruption;
  tally_.communicate_seconds += seconds_since(began);
  return std::nullopt;
}

torch::Tensor ReplicaTrainer::generator_micro_step(double scale) {
  const TrainingConfig& t = config_.training;
  const torch::Tensor z = latent_batch();
  // The backward pass goes through the discriminator to G only.
  const FrozenParameters frozen(discriminator_);
  torch::Tensor d_fake;
  {
    const AutocastScope autocast(t.precision, data_.device());
    d_fake = discriminator_.forward(generator_.forward(z));
  }
  const torch::Tensor l = generator_loss(generator_.loss[0], d_fake, t.bce, LossMean::kPerMember).sum() * scale;
  backward(l, generator_scaler_);
  return l.detach();
}

torch::Tensor ReplicaTrainer::discriminator_micro_step(std::int64_t micro, double scale) {
  const TrainingConfig& t = config_.training;
  const torch::Tensor real = data_.rows(shard_index(micro)).unsqueeze(0);
  seed_micro_batch(micro, kDiscriminatorRole);
  torch::Tensor fake;
  {
    torch::NoGradGuard no_grad;
    const AutocastScope autocast(t.precision, data_.device());
    fake = generator_.forward(latent_batch()).to(torch::kFloat);  // itself in fp32
  }
  const bool r1 = t.r1_penalty > 0.0;
  const torch::Tensor real_in = r1 ? real.detach().requires_grad_(true) : real;
  torch::Tensor d_real, d_fake;
  {
    const AutocastScope autocast(t.precision, data_.device());
    d_real = discriminator_.forward(real_in);
    d_fake = discriminator_.forward(fake);
  }
  torch::Tensor l = discriminator_loss(discriminator_.loss[0], d_real, d_fake, t.bce, LossMean::kPerMember);
  if (r1) {
    const torch::Tensor loss_scale =  // fp16: the input gradient taken on the scaled output, as the loss's
        t.precision == Precision::kFp16 ? torch::full({1}, discriminator_scaler_.value(), on_device()) : torch::Tensor();
    l = l + stacked_r1_penalty(d_real, real_in, t.r1_penalty, loss_scale);
  }
  if (t.loss == LossKind::kWganGp && t.gp_lambda > 0.0)
    l = l + stacked_gradient_penalty(discriminator_, real, fake, torch::rand({1, shard_rows(), 1}, stream_, on_device()),
                                     t.gp_lambda);
  l = l.sum() * scale;
  backward(l, discriminator_scaler_);
  return l.detach();
}

std::optional<Interruption> ReplicaTrainer::step(std::int64_t step, GradientAllreduce& reduce) {
  const TrainingConfig& t = config_.training;
  const std::int64_t k = config_.data_parallel.accumulate_steps;
  const double scale = weight_ / static_cast<double>(k);
  double computing = 0.0;
  auto began = Clock::now();

  // Which of the two step on this batch is common/step_schedule.h's rule,
  // the same on every replica, so every replica all-reduces the same nets.
  std::vector<torch::Tensor> losses;
  tally_.images += shard_rows() * k;

  // The generator against the discriminator, on its steps.
  if (generator_steps_on(t, step)) {
    generator_.optimizer().zero_grad();
    for (std::int64_t m = 0; m < k; ++m) {
      seed_micro_batch(step * k + m, kGeneratorRole);
      losses.push_back(generator_micro_step(scale));
    }
    computing += seconds_since(began);
    if (auto interruption =
            reduce_and_step(generator_, generator_shard_, std::move(losses), tally_.generator_loss, reduce, computing))
      return interruption;
    ++tally_.generator_steps;
  }

  // The discriminator (the critic for wgan_gp), on its steps.
  if (discriminator_steps_on(t, step)) {
    began = Clock::now();
    discriminator_.optimizer().zero_grad();
    losses.clear();
    for (std::int64_t m = 0; m < k; ++m) losses.push_back(discriminator_micro_step(step * k + m, scale));
    computing += seconds_since(began);
    if (auto interruption = reduce_and_step(discriminator_, discriminator_shard_, std::move(losses),
                                            tally_.discriminator_loss, reduce, computing))
      return interruption;
    ++tally_.discriminator_steps;
  }
  if (auto interruption = average_buffers(reduce)) return interruption;
  tally_.compute_seconds += computing;
  ++tally_.steps;
  return std::nullopt;
}

ReplicaTally ReplicaTrainer::take_tally() {
  for (auto& [tally, losses] : pending_losses_) *tally += sum_in_order(losses);
  pending_losses_.clear();
  ReplicaTally out = tally_;
  tally_ = ReplicaTally{};
  generator_.release_gradients();
  discriminator_.release_gradients();
  return out;
}

Individual ReplicaTrainer::generator_weights() const {
  return Individual::decode(generator_.row_bytes(0, /*with_optimizer_state=*/false), generator_.shape(),
                            generator_.adam_settings(), /*with_optimizer_state=*/false, generator_.device());
}

torch::Tensor ReplicaTrainer::sample(std::int64_t n, at::Generator gen) {
  torch::NoGradGuard no_grad;
  StackedNetwork& g = generator_.network();
  g->eval();
  const torch::Tensor z = torch::randn({1, n, generator_.shape().latent_dim}, gen, torch::kFloat32);
  torch::Tensor samples = generator_.forward(z.to(data_.device())).select(0, 0);
  g->train();
  return samples;
}

Bytes ReplicaTrainer::encode() const {
  ByteWriter w;
  w.put<std::uint32_t>(kPairMagic);
  w.put_bytes(generator_.row_bytes(0));
  w.put_bytes(discriminator_.row_bytes(0));
  return w.take();
}

void ReplicaTrainer::decode(const Bytes& bytes, const std::string& what) {
  ByteReader r(bytes, what);
  if (r.get<std::uint32_t>() != kPairMagic)
    throw InputError(fmt::format("{}: not a data-parallel replica: expected a G/D pair", what));
  for (auto* shard : {&generator_shard_, &discriminator_shard_})
    if (*shard) {  // made again from the state read here
      (*shard)->hand_back();
      shard->reset();
    }
  try {
    generator_.load_row(0, r.get_bytes());
    discriminator_.load_row(0, r.get_bytes());
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", what, e.what()));
  }
  if (r.remaining() != 0) throw InputError(fmt::format("{}: {} bytes after the pair", what, r.remaining()));
}

}  // namespace cellgan
