// The master's view of the workers as processes and members (see
// master.h): who they are, ending a lost one, and going on without it in
// place (rehoming) or stopping for a restart.
#include "master/master.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/checkpoint_store.h"
#include "common/error.h"
#include "common/log.h"
#include "master/checkpoint_collector.h"
#include "master/job_status.h"
#include "master/run_directory.h"
#include "master/worker_processes.h"

namespace cellgan {

void Master::take_identity(int worker, const Bytes& payload) { processes_->set(worker, decode_identity(payload)); }

void Master::kill_worker(int worker) {
  if (const std::string line = processes_->kill(worker); !line.empty()) event(line);
}

void Master::kill_remaining_workers() const { processes_->kill_remaining(); }

std::int64_t Master::checkpoint_to_go_back_to(const std::string& context) {
  // A lost worker may have saved its cells and died before its report came:
  // such a checkpoint is complete by its cells' records. Only generations
  // the master has written count, so that metrics.jsonl goes on from there.
  const std::int64_t written = run_->generations_written();
  run_->sync_metrics();
  for (const std::string& folder : complete_from_records(config_.output_dir, written))
    event(fmt::format("checkpoint {} complete: every cell saved, not every report in (the manifest is written "
                      "from the cells' records)",
                      folder));
  // As --resume auto does: the newest complete checkpoint whose files pass
  // their checks (one the survivors cannot read would end the run).
  std::vector<std::string> skipped;
  const auto point = newest_complete_checkpoint(config_.output_dir, skipped, written);
  for (const std::string& line : skipped) event(context + "skipping checkpoint " + line);
  return point ? point->manifest.generation : 0;
}

void Master::lose_worker(int worker, const std::string& why) {
  const std::size_t i = static_cast<std::size_t>(worker - 1);
  lost_[i] = true;
  worker_lost_ = true;
  show_worker(worker);
  event(fmt::format("worker rank {} is lost: {}", worker, why));
  kill_worker(worker);
  if (results_[i]) {
    event(fmt::format("worker rank {} had sent its result: the run goes on", worker));
    return;
  }
  if (!factory_.survives_rank_loss() || stop_.active()) {
    const std::int64_t last = checkpoint_to_go_back_to("");
    const std::string cannot = stop_.active() ? "a stop is under way, so the run does not rehome"
                                              : "the job cannot go on in place (that needs mpirun --enable-recovery)";
    const std::string from =
        last > 0
            ? fmt::format("the run stops after its checkpoint of generation {}", last)
            : std::string("the run stops; it has no complete checkpoint yet, so it starts again from generation 0");
    const std::string what = fmt::format("worker rank {} is lost ({}) and {}: {}; run the same command with "
                                         "--resume auto to continue",
                                         worker, why, cannot, from);
    event(what);
    abort_workers(kExitRestart, what);
    throw RestartNeeded(what);
  }
  std::vector<int> survivors;
  for (int w : members_)
    if (alive(w)) survivors.push_back(w);
  if (survivors.empty()) {
    const std::string what = fmt::format("worker rank {} is lost ({}) and no worker is left", worker, why);
    abort_workers(kExitFailure, what);
    throw std::runtime_error(what);
  }
  members_ = survivors;
  ++epoch_;
  checkpoints_->restart_from(checkpoint_to_go_back_to("rehoming: "));
  for (auto& r : results_) r.reset();  // every cell goes back to the checkpoint
  const std::string folder = checkpoints_->last() > 0 ? checkpoint_folder(config_.output_dir, checkpoints_->last()) : "";
  const Bytes rehome = encode(MembersMessage{std::vector<std::int32_t>(members_.begin(), members_.end()),
                                             checkpoints_->last(), folder, kLocalGroupTag + 1000 * epoch_});
  for (int w : members_) comms_.world->send(w, kTagRehome, rehome);
  event(fmt::format("rehoming: workers {} go on from generation {}{}", fmt::join(members_, ","), checkpoints_->last(),
                    folder.empty() ? " (the start)" : " (" + folder + ")"));
  for (const std::string& line : layout_->reassign(members_)) run_->event(line);
}

}  // namespace cellgan
