// Where a run starts, from its output directory and `--resume` (docs/operations.md, "Faults: what is survived").
//
//   output_dir          no --resume                 --resume auto / PATH
//   missing or empty    fresh run                   fresh run (auto); PATH: error
//   interrupted run     error: suggests --resume    the newest complete checkpoint
//   (config.yaml, no                                (auto; corrupt ones are skipped,
//   result.json)                                    each said), or generation 0 when
//                                                   there is none; PATH: exactly the
//                                                   checkpoint folder PATH
//   finished run        error                       error: nothing to resume
//   anything else       error                       error
//
// A resumed run must have the same configuration as the interrupted one,
// except for the keys that change no result: runtime.*, checkpoint.*,
// status.*, faults and training.generations (not below the checkpoint's).
//
// Errors: InputError, one line naming output_dir, the checkpoint or the
// key that differs; nothing is read beyond what the check needs and nothing
// is written.
//
// Thread-safety: a pure function of the files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/checkpoint_store.h"
#include "common/config.h"

namespace cellgan {

struct ResumePlan {
  bool resuming = false;        // an interrupted run goes on in output_dir
  std::int64_t generation = 0;  // generations already done (the checkpoint's)
  std::string folder;           // the checkpoint's folder when generation > 0
  CheckpointManifest manifest;
  std::vector<std::string> notes;  // for the log and events.log: what was skipped, and why
};

// `resume`: "" (no --resume), "auto", or the path of a checkpoint folder.
ResumePlan plan_resume(const Config& config, const std::string& resume);

}  // namespace cellgan
