// The master's part of checkpoints: the workers report the files they
// wrote for a generation (CheckpointMessage); once every unit of work
// (cell) of that generation is in, the collector writes the manifest
// (common/checkpoint_store.h), which makes the checkpoint complete, and
// deletes the checkpoints older than the newest `keep`.
//
// Reports may come in any order, for several generations at once (the
// workers write on threads of their own and may be a generation apart).
//
// Thread-safety: one thread (the master's control loop).
#pragma once

#include <cstdint>
#include <map>
#include <functional>
#include <optional>
#include <string>

#include "common/checkpoint_store.h"
#include "common/comm/protocol.h"

namespace cellgan {

class CheckpointCollector {
 public:
  // `cells`: the files a complete checkpoint holds.
  // `before_manifest` runs just before each manifest is written: the master
  // makes metrics.jsonl durable there, so that a complete checkpoint never
  // gets ahead of the records on disk (a node crash, then --resume auto).
  CheckpointCollector(std::string output_dir, std::uint64_t seed, std::int64_t rows, std::int64_t cols, int cells,
                      std::int64_t keep, std::function<void()> before_manifest = {});

  // Takes a worker's report. Returns the events.log line when it completes
  // its generation's checkpoint (the manifest is then written), else
  // std::nullopt. Throws std::runtime_error when the manifest cannot be
  // written.
  std::optional<std::string> take(const CheckpointMessage& message);

  // The newest complete checkpoint's generation (0: none).
  std::int64_t last() const { return last_; }
  // After a resume or a rehoming: the run goes on from `generation`; files
  // reported for later generations are dropped (they are written again).
  void restart_from(std::int64_t generation);

 private:
  std::string output_dir_;
  std::uint64_t seed_;
  std::int64_t rows_, cols_;
  int cells_;
  std::function<void()> before_manifest_;
  std::int64_t keep_;
  std::int64_t last_ = 0;
  std::map<std::int64_t, std::map<int, CheckpointFile>> files_;  // by generation, then cell
  std::map<std::int64_t, double> seconds_;                        // by generation: the slowest write
};

}  // namespace cellgan
