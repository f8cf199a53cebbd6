// The signals that ask a run to stop cleanly: SIGTERM, SIGINT and SIGUSR1
// (mpirun forwards SIGUSR1 to every rank; SLURM sends it ahead of a time
// limit with --signal). While a StopSignals lives, these signals no longer
// end the process: each one is handed to `on_signal` (with its number) on
// the thread that calls poll(). Built on Boost.Asio's signal_set.
//
// Thread-safety: construct, poll and destroy on one thread.
#pragma once

#include <functional>
#include <memory>

namespace cellgan {

// Before the run's StopSignals exists (MPI_Init and reading the input take
// seconds): from this call on, SIGUSR1 no longer ends the process; one that
// arrives is kept, and the first StopSignals hands it to its on_signal at
// its first poll(). Every rank calls it; a worker then ignores SIGUSR1.
void hold_stop_signal_early();

class StopSignals {
 public:
  explicit StopSignals(std::function<void(int)> on_signal);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Runs `on_signal` for each signal that arrived since the last call; an
  // exception `on_signal` throws comes out of poll().
  void poll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cellgan
