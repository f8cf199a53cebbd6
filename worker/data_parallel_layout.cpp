// The data-parallel layout, worker half (see data_parallel_layout.h).
#include "worker/data_parallel_layout.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "common/comm/protocol.h"
#include "common/error.h"
#include "common/log.h"
#include "common/nn/ensemble.h"
#include "common/nn/scores.h"
#include "common/step_schedule.h"
#include "common/nn/torch_generator_lock.h"
#include "common/nn/training_data.h"
#include "common/process_stats.h"
#include "common/rng.h"
#include "worker/fault_injector.h"
#include "worker/gradient_allreduce.h"
#include "worker/nccl_allreduce.h"
#include "worker/replica_trainer.h"
#include "worker/two_level_allreduce.h"

namespace cellgan {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kPairCell = 0;  // the checkpoint file and ensemble of the one pair
constexpr int kReporter = 0;  // the worker that reports, saves and sends the result

}  // namespace

DataParallelLayout::DataParallelLayout(const Config& config, int workers, c10::Device device)
    : config_(config), device_(device), workers_(workers) {
  if (workers < 1)
    throw InputError(fmt::format("{}: workers: data_parallel needs at least one worker", config.source));
}

DataParallelLayout::~DataParallelLayout() = default;

std::string DataParallelLayout::start(int local_rank, const ResumeFrom& from) {
  rank_ = local_rank;
  const auto lock = lock_torch_generator();
  data_ = std::make_unique<TrainingData>(config_, device_);
  if (rank_ == kReporter) scorer_ = make_scorer(config_, device_);
  trainer_ = std::make_unique<ReplicaTrainer>(config_, *data_, rank_, workers_);
  if (from.generation > 0) {
    const CheckpointFile& file = manifest_entry(from.manifest, kPairCell, from.folder);
    trainer_->decode(read_cell_checkpoint(from.folder, file), fmt::format("{}/{}", from.folder, file.name));
  }
  const std::int64_t per_step = trainer_->global_rows() * config_.data_parallel.accumulate_steps;
  steps_ = config_.training.batches_per_generation > 0 ? config_.training.batches_per_generation
                                                       : std::max<std::int64_t>(1, data_->size() / per_step);
  return fmt::format("replica {} of {}: {} rows of each global batch of {}, {} steps per generation, allreduce {}", rank_ + 1,
                     workers_, trainer_->shard_rows(), trainer_->global_rows(), steps_,
                     to_string(config_.data_parallel.allreduce));
}

Waited<GradientAllreduce*> DataParallelLayout::allreduce(WorkerExchange& exchange) {
  if (config_.data_parallel.allreduce != AllreduceKind::kNccl) {
    reduce_ = make_layout_allreduce(config_.data_parallel, exchange, *nodes_);
    return reduce_.get();
  }
  if (!reduce_ || joined_workers_ != exchange.local_size()) {
    reduce_.reset();  // before the join: one NCCL communicator per GPU at a time
    const int gpu = std::max<int>(0, device_.index());
    const DataParallelConfig& p = config_.data_parallel;
    Waited<std::unique_ptr<GradientAllreduce>> joined =
        two_level(p, *nodes_) ? join_nccl_two_level(exchange, gpu, *nodes_, p.across_nodes, p.compression)
                              : join_nccl(exchange, gpu);
    if (auto* interruption = std::get_if<Interruption>(&joined)) return std::move(*interruption);
    reduce_ = std::move(std::get<std::unique_ptr<GradientAllreduce>>(joined));
    joined_workers_ = exchange.local_size();
  }
  reduce_->tally() = AllreduceTally{};
  return reduce_.get();
}

Waited<std::vector<GenerationRecord>> DataParallelLayout::run_generation(std::int64_t generation,
                                                                        WorkerExchange& exchange) {
  if (!nodes_ || nodes_->workers() != exchange.local_size()) {
    Waited<NodeMap> found = find_nodes(config_.data_parallel, exchange, host_name());
    if (auto* interruption = std::get_if<Interruption>(&found)) return std::move(*interruption);
    nodes_ = std::move(std::get<NodeMap>(found));
    if (rank_ == kReporter)
      log::info("data_parallel: {} workers on {} node(s), all-reduce {} {}", exchange.local_size(), nodes_->nodes(),
                to_string(config_.data_parallel.allreduce),
                two_level(config_.data_parallel, *nodes_) ? "two_level" : "flat");
  }
  Waited<GradientAllreduce*> made = allreduce(exchange);
  if (auto* interruption = std::get_if<Interruption>(&made)) return std::move(*interruption);
  GradientAllreduce* reduce = std::get<GradientAllreduce*>(made);
  // The fault `delay` slows this worker's steps (fault_injector.h); the
  // others wait for it in the all-reduces.
  const CellFaults faults = faults_ ? faults_->for_cell(kPairCell, generation + 1) : CellFaults{};
  const auto began = Clock::now();
  for (std::int64_t b = 0; b < steps_; ++b) {
    if (faults.batch_delay.count() > 0) std::this_thread::sleep_for(faults.batch_delay);
    if (auto interruption = trainer_->step(generation * steps_ + b, *reduce)) {
      reduce_.reset();
      return std::move(*interruption);
    }
  }
  const double wall = seconds_since(began);
  const ReplicaTally tally = trainer_->take_tally();
  if (rank_ != kReporter) return std::vector<GenerationRecord>{};

  GenerationRecord record = scored_record(generation);
  const auto steps = static_cast<double>(std::max<std::int64_t>(1, tally.steps));
  record.generator_loss =
      tally.generator_steps > 0 ? tally.generator_loss / static_cast<double>(tally.generator_steps) : 0.0;
  record.discriminator_loss =
      tally.discriminator_steps > 0 ? tally.discriminator_loss / static_cast<double>(tally.discriminator_steps) : 0.0;
  record.generator_lrs = {trainer_->generator().learning_rate(0)};
  record.discriminator_lrs = {trainer_->discriminator().learning_rate(0)};
  record.mixture_weights = {1.0};
  record.seconds["compute"] = tally.compute_seconds;
  record.seconds["communicate"] = tally.communicate_seconds;
  record.counts["allreduce_bytes_per_step"] = static_cast<double>(reduce->tally().bytes_sent) / steps;
  record.counts["allreduce_messages_per_step"] = static_cast<double>(reduce->tally().messages) / steps;
  record.counts["images_per_second"] =
      wall > 0.0 ? static_cast<double>(trainer_->global_rows() * config_.data_parallel.accumulate_steps) * steps / wall
                 : 0.0;
  record.counts["workers"] = workers_;
  record.counts["nodes"] = nodes_->nodes();
  record.counts["adam_state_bytes"] = static_cast<double>(trainer_->optimizer_state_bytes());
  if (config_.training.precision == Precision::kFp16)
    record.counts["skipped_steps"] = static_cast<double>(tally.skipped_steps);
  if (const auto* levels = dynamic_cast<const TwoLevelAllreduce*>(reduce))
    record.counts["across_node_bytes_per_step"] = static_cast<double>(levels->across_nodes().bytes_sent) / steps;
  return std::vector<GenerationRecord>{std::move(record)};
}

GenerationRecord DataParallelLayout::scored_record(std::int64_t generation) {
  GenerationRecord record;
  record.cell = kPairCell;
  record.generation = generation + 1;
  const bool scored = preview_generation(config_, record.generation);
  record.seconds["evaluate"] = 0.0;
  if (!scored) return record;
  const auto began = Clock::now();
  const torch::Tensor samples = trainer_->sample(
      config_.training.score_samples,
      at::detail::createCPUGenerator(derive_seed(config_.seed, Stream::kEvaluation, static_cast<std::uint64_t>(generation))));
  record.scores = scorer_->report(samples);
  const std::int64_t shown = is_toy(config_.data.dataset) ? samples.size(0)
                                                          : std::min(samples.size(0), config_.evaluation.grid_images);
  const torch::Tensor first = samples.narrow(0, 0, shown).to(torch::kCPU).contiguous();
  record.preview.assign(first.data_ptr<float>(), first.data_ptr<float>() + first.numel());
  record.seconds["evaluate"] = seconds_since(began);
  return record;
}

Bytes DataParallelLayout::results() {
  if (rank_ != kReporter) return encode(ResultMessage{});
  Ensemble ensemble;
  ensemble.shape = trainer_->generator().shape();
  ensemble.cell = kPairCell;
  ensemble.generators.push_back(trainer_->generator_weights());  // made undrawn: no lock_torch_generator()
  ensemble.weights = {1.0};
  return encode(ResultMessage{{kPairCell}, {ensemble.encode()}});
}

Waited<std::vector<CellBytes>> DataParallelLayout::checkpoint(WorkerExchange& exchange) {
  if (trainer_->sharded())  // worker 0 gets every shard of Adam's state, for the pair's bytes
    if (auto interruption = trainer_->gather_optimizer(exchange)) return std::move(*interruption);
  if (rank_ != kReporter) return std::vector<CellBytes>{};
  std::vector<CellBytes> cells{CellBytes{kPairCell, trainer_->encode()}};
  trainer_->release_gathered_optimizer();
  return cells;
}

}  // namespace cellgan
