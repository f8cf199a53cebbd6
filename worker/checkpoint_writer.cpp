// Checkpoint files written on a thread of their own (see checkpoint_writer.h).
#include "worker/checkpoint_writer.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include "common/checkpoint_store.h"
#include "common/log.h"
#include "worker/fault_injector.h"

namespace cellgan {

namespace {

constexpr int kWriterNice = 10;
// Checkpoints handed over and not yet written, at most: with
// checkpoint.every 1 and a slow disk the encoded bytes would otherwise
// pile up in memory; write() then waits for the oldest.
constexpr std::size_t kMaxQueued = 2;

}  // namespace

CheckpointWriter::CheckpointWriter(Written on_written, const FaultInjector* faults)
    : on_written_(std::move(on_written)), faults_(faults), thread_([this] { run(); }) {}

CheckpointWriter::~CheckpointWriter() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void CheckpointWriter::write(const CheckpointId& id, std::string folder, std::vector<CellBytes> cells,
                             double encode_seconds) {
  {
    MutexLock lock(mutex_);
    while (!(queue_.size() + (busy_ ? 1 : 0) < kMaxQueued || error_)) lock.wait(changed_);
  }
  rethrow_if_failed();
  {
    MutexLock lock(mutex_);
    queue_.push_back(Job{id, std::move(folder), std::move(cells), encode_seconds});
  }
  changed_.notify_all();
}

void CheckpointWriter::drain() {
  {
    MutexLock lock(mutex_);
    while (!((queue_.empty() && !busy_) || error_)) lock.wait(changed_);
  }
  rethrow_if_failed();
}

void CheckpointWriter::rethrow_if_failed() {
  MutexLock lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

void CheckpointWriter::run() {
  log::set_thread_name("ckpt");
  // Below the training thread: on cores the ranks share, the files are
  // written in the time training leaves (waits for neighbours, the
  // master's idle core), not in training's. Linux applies a thread's own
  // nice value; failing to set it changes only the speed.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kWriterNice);
  for (;;) {
    std::optional<Job> job;
    {
      MutexLock lock(mutex_);
      while (queue_.empty() && !stopping_) lock.wait(changed_);
      if (queue_.empty()) return;  // stopping, and nothing left
      job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    std::exception_ptr failed;
    try {
      write_one(*job);
    } catch (...) {
      failed = std::current_exception();
    }
    {
      MutexLock lock(mutex_);
      busy_ = false;
      if (failed && !error_) {
        error_ = failed;
        queue_.clear();  // nothing after a failed checkpoint is written
      }
    }
    changed_.notify_all();
  }
}

void CheckpointWriter::write_one(const Job& job) {
  const auto began = std::chrono::steady_clock::now();
  CheckpointMessage saved{job.id.generation, {}, 0.0, {}};
  for (const CellBytes& c : job.cells)
    saved.files.push_back(write_cell_checkpoint(job.folder, job.id, c.cell, c.bytes));
  saved.seconds = job.encode_seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (faults_ != nullptr) saved.events = faults_->corrupt_checkpoint(job.id.generation, job.folder, saved.files);
  for (const std::string& line : saved.events) log::warn("{}", line);
  on_written_(saved);
}

}  // namespace cellgan
