// A whole cellgan job in one process, for tests: the master on the calling
// thread and W workers on threads of their own, over the in-process
// communicators (common/comm/in_process_job.h).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/comm/in_process_job.h"
#include "common/error.h"
#include "common/log.h"
#include "master/master.h"
#include "worker/worker.h"

namespace cellgan::test {

struct JobOutcome {
  std::optional<RunResult> result;  // when the master finished
  std::string master_error;         // what the master threw, if it threw
  int master_code = 0;              // the exit code main() gives what it threw (common/error.h)
  bool worker_lost = false;         // the master declared a worker dead
  std::vector<int> worker_codes;    // exit codes, worker rank 1 first
  std::vector<bool> master_lost;    // each worker presumed the master dead
  // From the master's end (return or throw) until every worker thread ended.
  std::chrono::duration<double> workers_ended_after{0};
};

struct JobOptions {
  std::map<int, Worker::TestHooks> hooks;  // by worker rank
  std::string resume;                      // cellgan train --resume
  std::int64_t stop_after = -1;            // Master::TEST_stop_after
  std::vector<Fault> faults;               // --fault options
};

// Runs the job of `config_path` with `workers` workers.
inline JobOutcome run_one_process_job(const std::string& config_path, int workers, const JobOptions& options) {
  const auto& hooks = options.hooks;
  InProcessJob job(workers + 1);
  std::vector<std::unique_ptr<JobCommsFactory>> factories;
  for (int r = 0; r <= workers; ++r) factories.push_back(job.factory(r));
  JobOutcome out;
  out.worker_codes.assign(static_cast<std::size_t>(workers), -1);
  out.master_lost.assign(static_cast<std::size_t>(workers), false);
  std::vector<std::thread> threads;
  for (int r = 1; r <= workers; ++r) {
    threads.emplace_back([&, r] {
      log::set_thread_rank(r);
      Worker worker(*factories[static_cast<std::size_t>(r)]);
      if (hooks.count(r)) worker.TEST_set_hooks(hooks.at(r));
      out.worker_codes[static_cast<std::size_t>(r - 1)] = worker.run();
      out.master_lost[static_cast<std::size_t>(r - 1)] = worker.master_lost();
    });
  }
  log::set_thread_rank(0);
  std::optional<Master> master;  // made inside the try: the worker threads are joined whatever it throws
  try {
    master.emplace(*factories[0], config_path, options.resume, options.faults);
    if (options.stop_after >= 0) master->TEST_stop_after(options.stop_after);
    out.result = master->run();
  } catch (const InputError& e) {
    out.master_error = e.what();
    out.master_code = kExitBadInput;
  } catch (const RestartNeeded& e) {
    out.master_error = e.what();
    out.master_code = kExitRestart;
  } catch (const std::exception& e) {
    out.master_error = e.what();
    out.master_code = kExitFailure;
  }
  out.worker_lost = master && master->worker_lost();
  const auto master_ended = std::chrono::steady_clock::now();
  for (auto& t : threads) t.join();
  out.workers_ended_after = std::chrono::steady_clock::now() - master_ended;
  return out;
}

inline JobOutcome run_one_process_job(const std::string& config_path, int workers,
                                      const std::map<int, Worker::TestHooks>& hooks = {},
                                      const std::vector<Fault>& faults = {}) {
  JobOptions options;
  options.hooks = hooks;
  options.faults = faults;
  return run_one_process_job(config_path, workers, options);
}

}  // namespace cellgan::test
