// The master's view of the workers as members and processes (see
// worker_membership.h).
#include "master/worker_membership.h"

#include <algorithm>
#include <utility>

namespace cellgan {

WorkerMembership::WorkerMembership(int workers)
    : processes_(workers),
      lost_(static_cast<std::size_t>(std::max(workers, 0)), false),
      failed_(lost_.size(), false) {}

void WorkerMembership::admit(const std::vector<int>& ready) {
  members_ = ready;
  global_ranks_ = members_;
  global_ranks_.insert(global_ranks_.begin(), kMasterRank);
}

std::vector<int> WorkerMembership::survivors(const std::function<bool(int)>& alive) const {
  std::vector<int> out;
  for (int w : members_)
    if (alive(w)) out.push_back(w);
  return out;
}

MembersMessage WorkerMembership::rehome(std::vector<int> survivors, std::int64_t generation,
                                        const std::string& folder) {
  members_ = std::move(survivors);
  ++epoch_;
  return MembersMessage{std::vector<std::int32_t>(members_.begin(), members_.end()), generation, folder,
                        kLocalGroupTag + 1000 * epoch_};
}

void WorkerMembership::lose(int worker) {
  lost_.at(index(worker)) = true;
  any_lost_ = true;
}

}  // namespace cellgan
