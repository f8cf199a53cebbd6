// The data-parallel layout, worker half (worker_layout.h; configuration
// `layout: data_parallel`, section data_parallel): every worker holds a
// replica of one G/D pair and trains it on its shard of each global batch,
// the gradients summed over the workers by the configured all-reduce
// (gradient_allreduce.h); see replica_trainer.h for a step. The workers'
// grid is 1×W. A generation is training.batches_per_generation steps
// (0 = one epoch of global batches).
//
// What it reports, the replicas being identical:
// - records: one per generation, from worker 0 (LOCAL rank 0), as "cell 0":
//   the global batch's mean losses over the generation; seconds "compute"
//   (forward, backward, Adam), "communicate" (packing and all-reducing,
//   waits included) and "evaluate" (scoring); counts
//   "allreduce_bytes_per_step" and "allreduce_messages_per_step" (sent by
//   worker 0), "images_per_second" (global batch rows per second of the
//   generation), "workers" and "nodes" (those the all-reduce's hierarchy
//   sees; two_level adds "across_node_bytes_per_step", what worker 0 sent
//   to other nodes' leaders) and "adam_state_bytes" (the Adam moments
//   worker 0 keeps). On preview generations (evaluation.
//   preview_every) and the last one, worker 0 scores score_samples samples
//   of its generator (the record's scores) and keeps the first ones as the
//   preview; the other workers wait for it in the next all-reduce.
// - checkpoints: worker 0 writes the pair, Adam state included (with
//   shard_optimizer, gathered from every worker's shard first), as the
//   file of cell 0; a resumed run reads it on every worker.
// - result: worker 0's generator, as the ensemble of cell 0 (weight 1);
//   the others send an empty result.
// - faults: `delay` slows a worker's steps; `nan` (a cell's generators)
//   is not applied to the pair. kill, stall and drop-heartbeats are the
//   worker loop's, as for every layout.
//
// Thread-safety: belongs to the worker's training thread.
#pragma once

#include <memory>
#include <optional>

#include "worker/node_map.h"
#include "worker/worker_layout.h"

namespace cellgan {

class GradientAllreduce;
class ReplicaTrainer;
class SampleScorer;
class TrainingData;

class DataParallelLayout final : public WorkerLayout {
 public:
  // Throws InputError unless workers >= 1.
  DataParallelLayout(const Config& config, int workers, c10::Device device);
  ~DataParallelLayout() override;

  int worker_rows() const override { return 1; }
  int worker_cols() const override { return workers_; }
  std::string start(int local_rank, const ResumeFrom& from) override;
  Waited<std::vector<GenerationRecord>> run_generation(std::int64_t generation, WorkerExchange& exchange) override;
  Bytes results() override;
  Waited<std::vector<CellBytes>> checkpoint(WorkerExchange& exchange) override;

  // The replica, for tests (identical on every worker after each step).
  ReplicaTrainer& TEST_trainer() { return *trainer_; }
  // Steps per generation.
  std::int64_t steps_per_generation() const { return steps_; }

 private:
  GenerationRecord scored_record(std::int64_t generation);
  // The generation's all-reduce, its tally at zero: a new one, or for nccl
  // the one joined before (joined again when none is, or W has changed).
  Waited<GradientAllreduce*> allreduce(WorkerExchange& exchange);

  const Config& config_;
  const c10::Device device_;  // where it computes
  int workers_;
  int rank_ = 0;
  std::int64_t steps_ = 1;
  std::unique_ptr<TrainingData> data_;
  std::unique_ptr<SampleScorer> scorer_;  // worker 0 only
  std::unique_ptr<ReplicaTrainer> trainer_;
  std::optional<NodeMap> nodes_;  // found at the first generation (and again after a rehoming)
  std::unique_ptr<GradientAllreduce> reduce_;  // dropped after an interruption (nccl's is then aborted)
  int joined_workers_ = 0;                     // the W of nccl's join
};

}  // namespace cellgan
