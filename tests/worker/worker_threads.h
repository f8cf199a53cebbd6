// Test helper: W workers of a data-parallel layout as threads of one test
// over the in-process communicator, each with a WorkerExchange straight on
// its communicator (communicator_exchange.h), one intra-op Torch thread
// each; and a replica built as a worker builds it.
//
// Thread-safety: on_worker_threads() joins its threads before it returns;
// the bodies write into slots of their own.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "common/comm/in_process_communicator.h"
#include "common/config.h"
#include "common/nn/torch_generator_lock.h"
#include "common/nn/training_data.h"
#include "tests/worker/communicator_exchange.h"
#include "worker/replica_trainer.h"

namespace cellgan::test {

// Runs `body(rank, exchange)` on `workers` threads and joins them.
inline void on_worker_threads(int workers, const std::function<void(int, WorkerExchange&)>& body) {
  InProcessNetwork network(workers);
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r, comm = network.communicator(r)] {
      torch::set_num_threads(1);
      CommunicatorExchange exchange(*comm);
      body(r, exchange);
    });
  for (auto& t : threads) t.join();
}

// Worker `rank`'s replica, built under the generator lock (building draws
// from Torch's generator, which the threads share).
inline std::unique_ptr<ReplicaTrainer> make_replica(const Config& config, const TrainingData& data, int rank,
                                                    int workers) {
  const auto lock = lock_torch_generator();
  return std::make_unique<ReplicaTrainer>(config, data, rank, workers);
}

}  // namespace cellgan::test
