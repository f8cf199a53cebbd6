// The master's side of a job's start-up with its workers
// (common/comm/protocol.h): the verdict on the input, then the workers'
// readiness within a deadline, then go.
//
// 1. check_and_tell(): the master checks its input on a thread of its own
//    while beating to every worker (they wait for the verdict with a
//    deadline), then sends each the start message, or a refusal with the
//    exit code of what the check threw.
// 2. wait_until_ready(): each worker answers ready once it has loaded its
//    part; the master beats to the ready ones meanwhile (they wait for go
//    with a deadline). It ends when every worker is ready, when one reports
//    a failure, or at the deadline, and says which: the master decides what
//    a silent worker or a failure means.
// 3. go(): the members the job goes on with.
// Every wait is beat_until's loop (beating_wait.h).
//
// Thread-safety: the master's control thread; the check runs on a thread
// of its own while this one beats.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "common/comm/communicator.h"
#include "common/comm/protocol.h"

namespace cellgan {

class StartupHandshake {
 public:
  // Over `world`, with workers 1..`workers`; `rank` names the check's
  // thread in the log.
  StartupHandshake(Communicator& world, int workers, int rank) : world_(world), workers_(workers), rank_(rank) {}

  // Runs `check` (on a thread of its own) while beating to every worker
  // at the default heartbeat interval (the configuration is not read yet),
  // then sends every worker the start message it returns. If it throws,
  // every worker is sent a refusal with the exception's exit code
  // (exit_code_of, error.h) and its line, flushed within start_timeout(),
  // and the exception is rethrown.
  void check_and_tell(const std::function<StartMessage()>& check);

  // How the wait for the workers' readiness ended.
  struct Readiness {
    std::vector<int> ready;   // world ranks, ascending
    std::vector<int> silent;  // not ready by the deadline (empty unless it passed)
    // A worker's failure report, which ends the wait at once.
    std::optional<std::pair<int, FailureMessage>> failure;
  };
  // Waits until every worker has said ready, beating to the ready ones
  // every `beat_interval`; at most `dead_after`. A worker's identity on the
  // way goes to `identity`; heartbeats are passed over. Any other message
  // before ready is a bug (std::logic_error).
  Readiness wait_until_ready(std::chrono::milliseconds dead_after, std::chrono::milliseconds beat_interval,
                             const std::function<void(int, const IdentityMessage&)>& identity);

  // Runs `prepare` (on a thread of its own: the run folder, whose files
  // are synced to a disk that may be slow) while beating to `members`
  // every `beat_interval` (they wait for go with a deadline), then sends
  // them go (epoch 0). If `prepare` throws, no go is sent and the
  // exception is rethrown.
  void prepare_and_go(const std::function<void()>& prepare, std::chrono::milliseconds beat_interval,
                      const std::vector<int>& members);

 private:
  Communicator& world_;
  const int workers_;
  const int rank_;
};

}  // namespace cellgan
