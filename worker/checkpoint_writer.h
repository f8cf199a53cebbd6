// Checkpoint files written off the training thread. The training thread
// encodes its cells (WorkerLayout::checkpoint(), the only part that must
// see the training state) and hands the bytes over; a thread of its own
// writes them (common/checkpoint_store.h: temporary file, fsync, rename),
// applies the injected corruptions (fault_injector.h), and passes the
// CheckpointMessage to `on_written`, which reports it to the master. The
// master lists a checkpoint in a manifest once every cell's files are
// reported; each cell's record on disk (checkpoint_store.h) makes it
// complete even when a report is lost with its worker. A checkpoint still
// being written is never used.
//
// Checkpoints are written in the order handed over, at a lower priority
// than training (nice 10), with at most two handed over and not yet
// written (write() waits for the oldest). A write that fails
// (a full disk) is kept and rethrown on the training thread by the next
// call of write(), drain() or rethrow_if_failed(), as a write on that
// thread would have been.
//
// Thread-safety: write(), drain() and rethrow_if_failed() on one thread
// (the training thread); `on_written` is called on the writer's thread.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/checkpoint_store.h"
#include "common/comm/protocol.h"
#include "common/thread_annotations.h"

namespace cellgan {

class FaultInjector;

// One unit of work's encoded state.
struct CellBytes {
  int cell = 0;
  Bytes bytes;
};

class CheckpointWriter {
 public:
  using Written = std::function<void(const CheckpointMessage&)>;
  // `faults` (may be null) must outlive the writer.
  CheckpointWriter(Written on_written, const FaultInjector* faults);
  // Writes what is still queued, then joins the thread (a write that
  // fails then is not reported: the run is ending).
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Queues the checkpoint `id` (its generation, the run's seed and grid)
  // into `folder`; `encode_seconds` (the training thread's part) is added to
  // the write time reported.
  void write(const CheckpointId& id, std::string folder, std::vector<CellBytes> cells, double encode_seconds);
  // Waits until everything queued is written and reported.
  void drain();
  void rethrow_if_failed();

 private:
  struct Job {
    CheckpointId id;
    std::string folder;
    std::vector<CellBytes> cells;
    double encode_seconds;
  };
  void run();
  void write_one(const Job& job);

  Written on_written_;
  const FaultInjector* faults_;
  Mutex mutex_;
  CondVar changed_;
  std::deque<Job> queue_ GUARDED_BY(mutex_);
  bool busy_ GUARDED_BY(mutex_) = false;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::exception_ptr error_ GUARDED_BY(mutex_);
  std::thread thread_;
};

}  // namespace cellgan
