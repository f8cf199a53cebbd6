// A layout is how a job trains (configuration key `layout`): what a worker
// does each generation, what it reports, and what the master gathers and
// scores at the end. It is a pair of halves, one per side, since master/
// and worker/ never include each other:
// - WorkerLayout (this file): a worker's share of the job, one generation
//   at a time, and its result;
// - MasterLayout (master/master_layout.h): how work is assigned, how many
//   records a generation has, and the end: gathering, scoring, writing.
// Both halves agree through the protocol (common/comm/protocol.h):
// records are GenerationRecords, and the result is a ResultMessage.
//
// The job skeleton (Worker, worker.h) calls, in order: worker_rows() and
// worker_cols() before LOCAL is made; start(from); run_generation(g) for
// g = from.generation..G-1, with checkpoint() after the generations
// that are checkpointed; results(). Everything else — start-up, heartbeats, deadlines, errors,
// records to the master — is the skeleton's.
//
// Implementations: CoevolutionLayout (coevolution_layout.h),
// DataParallelLayout (data_parallel_layout.h), PerClassLayout
// (per_class_layout.h).
//
// Thread-safety: belongs to the worker's training thread.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint_store.h"
#include "worker/checkpoint_writer.h"
#include "common/comm/communicator.h"
#include "common/config.h"
#include "common/generation_record.h"
#include "worker/worker_exchange.h"

namespace cellgan {

// Where a worker's share starts: generation 0 (fresh), or a complete
// checkpoint taken after `generation` generations.
struct ResumeFrom {
  std::int64_t generation = 0;
  std::string folder;           // the checkpoint's folder, when generation > 0
  CheckpointManifest manifest;  // its manifest
};
class FaultInjector;

class WorkerLayout {
 public:
  virtual ~WorkerLayout() = default;

  // The dims of the workers' periodic Cartesian grid (LOCAL): rows x cols
  // = the number of workers.
  virtual int worker_rows() const = 0;
  virtual int worker_cols() const = 0;

  // Builds this worker's share (data, networks, ...). `local_rank` is the
  // worker's rank in LOCAL. With a checkpoint (from.generation > 0), the
  // share is read from it, as it was after from.generation generations.
  // Returns one line for the log. Throws InputError for a checkpoint that
  // cannot be read.
  virtual std::string start(int local_rank, const ResumeFrom& from) = 0;

  // One generation g (0-based): the exchange with the other workers, then
  // the training. Returns one record per unit of work (a cell), in order;
  // or the interruption of a wait (worker_exchange.h), and the share is
  // then to be dropped or left alone: the run ends, or goes on from a
  // checkpoint.
  [[nodiscard]] virtual Waited<std::vector<GenerationRecord>> run_generation(std::int64_t generation,
                                                                             WorkerExchange& exchange) = 0;

  // The encoded ResultMessage for the master, after the last generation.
  virtual Bytes results() = 0;

  // This worker's share as it is now, encoded for a checkpoint, one entry
  // per unit of work (cell); checkpoint_writer.h writes the files off the
  // training thread. Throws std::runtime_error for a state that must
  // never be saved (a non-finite individual). A collective where the
  // layout needs one (a sharded optimizer's state is gathered over
  // `exchange`): every worker checkpoints after the same generations.
  // Returns the interruption that came first, if any.
  [[nodiscard]] virtual Waited<std::vector<CellBytes>> checkpoint(WorkerExchange& exchange) = 0;
  // The faults its training is to suffer (fault_injector.h; null = none),
  // set before start(); it must outlive the layout's calls.
  void set_faults(const FaultInjector* faults) { faults_ = faults; }

 protected:
  const FaultInjector* faults_ = nullptr;
};

// The worker half of `config.layout` for a job of `workers` workers,
// computing on `device` (runtime.device, resolved once by the worker).
std::unique_ptr<WorkerLayout> make_worker_layout(const Config& config, int workers, c10::Device device);

}  // namespace cellgan
