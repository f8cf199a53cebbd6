// The run folder's contract: the names of the files cellgan writes in a
// run's output_dir, in one place. Every reader (the master on resume, the
// launcher, the sweep, the tests) takes the names from here.
//
//   run.lock       held (flock) by the master of the job writing here (run_lock.h)
//   config.yaml    the resolved configuration (written first)
//   run.json       what the run is and how it stands (run_state.h)
//   events.log     timestamped events: start, assignment, faults, stops,
//                  restarts by the launcher
//   metrics.jsonl  one line per cell and generation
//   checkpoints/   gen-NNNNNN/ folders, each with its manifest.json
//   previews/      gen-NNNNNN.png: the samples of a generation's best cell
//   result.json    the final scores; its presence marks a finished run
//                  (result_record.h)
//   summary.txt, ensemble.bin, samples.png: the results; per_class adds
//   classes.png and classes.json (the class index), data_parallel
//   layout.json (how the replicas were run)
//   report.html    the run's page (cellgan report)
//
// The records metrics.jsonl and result.json are read and written only
// through metrics_record.h and result_record.h.
//
// Thread-safety: constants.
#pragma once

namespace cellgan::run_files {

inline constexpr const char* kConfig = "config.yaml";
inline constexpr const char* kRunState = "run.json";
inline constexpr const char* kEvents = "events.log";
inline constexpr const char* kMetrics = "metrics.jsonl";
inline constexpr const char* kCheckpoints = "checkpoints";
inline constexpr const char* kManifest = "manifest.json";  // in each checkpoints/gen-NNNNNN/
inline constexpr const char* kPreviews = "previews";
inline constexpr const char* kResult = "result.json";
inline constexpr const char* kSummary = "summary.txt";
inline constexpr const char* kEnsemble = "ensemble.bin";
inline constexpr const char* kSamples = "samples.png";
inline constexpr const char* kClasses = "classes.png";
inline constexpr const char* kClassIndex = "classes.json";
inline constexpr const char* kLayoutRecord = "layout.json";
inline constexpr const char* kReport = "report.html";
inline constexpr const char* kLock = "run.lock";

}  // namespace cellgan::run_files
