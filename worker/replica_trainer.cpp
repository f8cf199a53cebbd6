// One replica of the data-parallel layout (see replica_trainer.h).
#include "worker/replica_trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/core.h>

#include "common/bytes.h"
#include "common/error.h"
#include "common/nn/device.h"
#include "common/nn/discriminator_step.h"
#include "common/nn/losses.h"
#include "common/nn/precision.h"
#include "common/step_schedule.h"
#include "common/nn/torch_generator_lock.h"
#include "common/rng.h"
#include "worker/gradient_fusion.h"

namespace cellgan {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr std::uint32_t kPairMagic = 0x52504c43;  // "CLPR"
constexpr int kGeneratorRole = 0;
constexpr int kDiscriminatorRole = 1;

AdamSettings adam_of(const Config& c) { return {c.training.adam_beta1, c.training.adam_beta2}; }

// Seeds Torch's generator from the run's seed before the generator, the
// first network built, so both networks come from it.
Individual build(const Config& c, Role role, torch::Device device) {
  if (role == Role::kGenerator) torch::manual_seed(derive_seed(c.seed, Stream::kReplicaInit));
  const LossKind g_loss = c.training.loss;
  return Individual(role, network_shape(c), c.training.learning_rate, adam_of(c),
                    role == Role::kGenerator ? g_loss : discriminator_loss_for(g_loss), device);
}

// The sum, in order, of one step's micro-batch losses (as the doubles
// item() would read).
double sum_in_order(const std::vector<torch::Tensor>& losses) {
  double sum = 0.0;
  for (double v : host_values(losses)) sum += v;
  return sum;
}

std::vector<torch::Tensor> gradients_of(Individual& net) {
  std::vector<torch::Tensor> grads;
  for (torch::Tensor& p : net.module().parameters()) {
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
      generator_(build(config, Role::kGenerator, data.device())),
      discriminator_(build(config, Role::kDiscriminator, data.device())) {
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

void ReplicaTrainer::seed_micro_batch(std::int64_t micro, int role) const {
  const auto index = (static_cast<std::uint64_t>(micro) << 17) | (static_cast<std::uint64_t>(rank_) << 1) |
                     static_cast<std::uint64_t>(role);
  torch::manual_seed(derive_seed(config_.seed, Stream::kReplicaStep, index));
}

std::optional<Interruption> ReplicaTrainer::reduce_gradients(Individual& net, std::vector<torch::Tensor> losses,
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

std::optional<Interruption> ReplicaTrainer::reduce_and_step(Individual& net, std::unique_ptr<ShardedAdam>& shard,
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
    torch::nn::utils::clip_grad_norm_(net.module().parameters(), config_.data_parallel.clip_grad_norm);
  const auto began = Clock::now();
  net.optimizer().step();
  computing += seconds_since(began);
  return std::nullopt;
}

std::optional<Interruption> ReplicaTrainer::sharded_step(Individual& net, std::unique_ptr<ShardedAdam>& shard,
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
  if (sharded()) {
    std::int64_t bytes = 0;
    for (auto* shard : {&generator_shard_, &discriminator_shard_})
      if (*shard) bytes += (*shard)->state_bytes();
    return bytes;
  }
  std::int64_t bytes = 0;
  for (Individual* net : {&generator_, &discriminator_})
    for (std::size_t i = 0; i < net->module().parameters().size(); ++i) {
      const Individual::AdamMoments state = net->adam_state(i);
      if (state.step >= 0) bytes += (state.exp_avg.numel() + state.exp_avg_sq.numel()) * 4;
    }
  return bytes;
}

std::optional<Interruption> ReplicaTrainer::average_buffers(GradientAllreduce& reduce) {
  std::vector<torch::Tensor> buffers;
  for (Individual* net : {&generator_, &discriminator_})
    for (torch::Tensor& b : net->module().buffers())
      if (b.scalar_type() == torch::kFloat32) buffers.push_back(b);
  if (buffers.empty() || workers_ == 1) return std::nullopt;
  const auto began = Clock::now();
  torch::NoGradGuard no_grad;
  for (torch::Tensor& b : buffers) b.mul_(weight_);
  if (auto interruption = allreduce_fused(buffers, config_.data_parallel.fusion_bytes, reduce)) return interruption;
  tally_.communicate_seconds += seconds_since(began);
  return std::nullopt;
}

std::optional<Interruption> ReplicaTrainer::step(std::int64_t step, GradientAllreduce& reduce) {
  const TrainingConfig& t = config_.training;
  const std::int64_t k = config_.data_parallel.accumulate_steps;
  const double scale = weight_ / static_cast<double>(k);
  const std::int64_t latent = generator_.shape().latent_dim;
  const std::int64_t rows = shard_end_ - shard_begin_;
  double computing = 0.0;
  auto began = Clock::now();

  // Which of the two step on this batch is common/step_schedule.h's rule,
  // the same on every replica, so every replica all-reduces the same nets.
  // Each stretch that seeds and draws holds the generator lock
  // (torch_generator_lock.h); the all-reduces, which wait for the other
  // workers, do not.
  const auto on_device = torch::TensorOptions().device(data_.device()).dtype(torch::kFloat32);
  std::vector<torch::Tensor> losses;
  tally_.images += rows * k;

  // The generator against the discriminator, on its steps.
  if (generator_steps_on(t, step)) {
    generator_.optimizer().zero_grad();
    for (std::int64_t m = 0; m < k; ++m) {
      const auto lock = lock_torch_generator();
      seed_micro_batch(step * k + m, kGeneratorRole);
      const torch::Tensor z = torch::randn({rows, latent}, on_device);
      torch::Tensor d_fake;
      {
        const AutocastScope autocast(t.precision, data_.device());
        d_fake = discriminator_.discriminator()->forward(generator_.generator()->forward(z));
      }
      const torch::Tensor l = generator_loss(generator_.loss, d_fake, t.bce) * scale;
      backward(l, generator_scaler_);
      losses.push_back(l.detach());
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
    for (std::int64_t m = 0; m < k; ++m) {
      const torch::Tensor real = data_.rows(shard_index(step * k + m));
      const auto lock = lock_torch_generator();
      seed_micro_batch(step * k + m, kDiscriminatorRole);
      torch::Tensor l;
      {
        const AutocastScope autocast(t.precision, data_.device());
        torch::Tensor fake;
        {
          torch::NoGradGuard no_grad;
          fake = generator_.generator()->forward(torch::randn({rows, latent}, on_device));
        }
        l = discriminator_step_loss(discriminator_.discriminator(), discriminator_.loss, real, fake,
                                    discriminator_penalties(t)) *
            scale;
      }
      backward(l, discriminator_scaler_);
      losses.push_back(l.detach());
    }
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

Bytes ReplicaTrainer::encode() const {
  ByteWriter w;
  w.put<std::uint32_t>(kPairMagic);
  w.put_bytes(generator_.encode());
  w.put_bytes(discriminator_.encode());
  return w.take();
}

void ReplicaTrainer::decode(const Bytes& bytes, const std::string& what) {
  ByteReader r(bytes, what);
  if (r.get<std::uint32_t>() != kPairMagic)
    throw InputError(fmt::format("{}: not a data-parallel replica: expected a G/D pair", what));
  const NetworkShape shape = network_shape(config_);
  generator_shard_.reset();  // made again from the state read here
  discriminator_shard_.reset();
  generator_ = Individual::decode(r.get_bytes(), shape, adam_of(config_), true, data_.device());
  discriminator_ = Individual::decode(r.get_bytes(), shape, adam_of(config_), true, data_.device());
  if (r.remaining() != 0) throw InputError(fmt::format("{}: {} bytes after the pair", what, r.remaining()));
}

}  // namespace cellgan
