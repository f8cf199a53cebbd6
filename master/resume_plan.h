// Where a run starts, from its output directory and `--resume` (docs/operations.md, "Faults: what is survived").
//
//   output_dir          no --resume                 --resume auto / PATH
//   missing, empty, or  fresh run                   fresh run (auto); PATH: error
//   none of a run's
//   files (run.lock is
//   none)
//   interrupted run     error: suggests --resume    the newest complete checkpoint
//   (config.yaml, no                                (auto; corrupt ones are skipped,
//   result.json)                                    each said), or generation 0 when
//                                                   there is none; PATH: exactly the
//                                                   checkpoint folder PATH
//   finished run        error                       error: nothing to resume
//   a run's records     error: put config.yaml      error: the same
//   (checkpoints/,      back or choose another
//   metrics.jsonl, ...) output_dir
//   without config.yaml
//   anything else       error                       error
//
// A resumed run must have the same configuration as the interrupted one,
// except for the keys that change no result: output_dir (the folder is the
// run wherever it now is; a folder moved since says so in `notes`),
// runtime.*, checkpoint.*, status.*, faults and training.generations (not
// below the checkpoint's).
//
// A resumed run must find in metrics.jsonl every generation up to its
// checkpoint's, `records_per_generation` lines each (a checkpoint holds the
// networks, not the records): a file missing or cut short is an error
// that names the generations missing and the newest checkpoint the file
// still covers, if any.
//
// Errors: InputError, one line naming output_dir, the checkpoint, the file
// or the key that differs; nothing is read beyond what the check needs and
// nothing is written.
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
  std::vector<std::string> notes;     // for the log and events.log: what was skipped, and why
  std::vector<std::string> warnings;  // the same, for what loses work: no checkpoint left to resume
};

// `resume`: "" (no --resume), "auto", or the path of a checkpoint folder.
// `records_per_generation`: the layout's (master_layout.h).
ResumePlan plan_resume(const Config& config, const std::string& resume, int records_per_generation);

}  // namespace cellgan
