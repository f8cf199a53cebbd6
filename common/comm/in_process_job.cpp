// The in-process job's communicators (see in_process_job.h).
//
// The job's state holds the WORLD network and a registry of the networks
// made by group()/cartesian(), keyed by (ranks, tag, n) where n counts a
// member's earlier creations of the same (ranks, tag). The first member to
// arrive makes the network; the others find it.
#include "common/comm/in_process_job.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <fmt/core.h>

#include "common/comm/in_process_communicator.h"
#include "common/thread_annotations.h"

namespace cellgan {

struct InProcessJob::State {
  explicit State(int n) : world(n), handed_out(static_cast<std::size_t>(n), false) {}

  using Key = std::tuple<std::vector<int>, int, int>;  // ranks, tag, n-th creation
  struct Group {
    std::shared_ptr<InProcessNetwork> network;
    std::size_t arrived = 0;
  };

  InProcessNetwork world;
  Mutex mutex;
  CondVar arrived;
  std::vector<bool> handed_out GUARDED_BY(mutex);
  std::map<Key, Group> groups GUARDED_BY(mutex);

  // The group's network, once every member has arrived (a collective, as
  // MPI_Comm_create_group is); std::runtime_error after `timeout`.
  std::shared_ptr<InProcessNetwork> join(const Key& key, std::chrono::milliseconds timeout) {
    MutexLock lock(mutex);
    Group& group = groups[key];
    const std::size_t size = std::get<0>(key).size();
    if (!group.network) group.network = std::make_shared<InProcessNetwork>(static_cast<int>(size));
    ++group.arrived;
    arrived.notify_all();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (group.arrived < size)
      if (lock.wait_until(arrived, deadline) == std::cv_status::timeout && group.arrived < size)
        throw std::runtime_error(fmt::format("in-process group of {} ranks (tag {}): {} of them arrived within {} ms",
                                 size, std::get<1>(key), group.arrived, timeout.count()));
    return group.network;
  }
};

namespace {

// Far beyond any healthy start-up; a member that never comes fails the test.
constexpr std::chrono::milliseconds kGroupTimeout{60000};

class InProcessFactory final : public JobCommsFactory {
 public:
  InProcessFactory(std::shared_ptr<InProcessJob::State> state, int rank) : state_(std::move(state)), rank_(rank) {}
  // Threads end by themselves: a lost rank never hangs the others.
  bool survives_rank_loss() const override { return true; }

  int world_rank() const override { return rank_; }
  int world_size() const override { return state_->world.size(); }

  std::unique_ptr<Communicator> world() override { return state_->world.communicator(rank_); }

  std::unique_ptr<Communicator> group(const std::vector<int>& world_ranks, int tag) override {
    const int me = member_index(world_ranks, "group");
    const int n = created_[{world_ranks, tag}]++;
    return state_->join({world_ranks, tag, n}, kGroupTimeout)->communicator(me);
  }

  std::unique_ptr<Communicator> cartesian(const std::vector<int>& world_ranks, int rows, int cols,
                                          int tag) override {
    if (rows <= 0 || cols <= 0 || static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) != world_ranks.size())
      throw std::invalid_argument(
          fmt::format("cartesian: a {}x{} grid does not fit {} ranks", rows, cols, world_ranks.size()));
    return group(world_ranks, tag);  // no reordering: Cartesian rank = index in world_ranks
  }

 private:
  int member_index(const std::vector<int>& world_ranks, const char* what) const {
    if (world_ranks.empty()) throw std::invalid_argument(fmt::format("{}: no ranks given", what));
    for (std::size_t i = 1; i < world_ranks.size(); ++i)
      if (world_ranks[i] <= world_ranks[i - 1])
        throw std::invalid_argument(fmt::format("{}: ranks must be strictly ascending", what));
    const auto it = std::find(world_ranks.begin(), world_ranks.end(), rank_);
    if (it == world_ranks.end())
      throw std::invalid_argument(fmt::format("{}: called by world rank {}, which is not a member", what, rank_));
    return static_cast<int>(it - world_ranks.begin());
  }

  std::shared_ptr<InProcessJob::State> state_;
  int rank_;
  std::map<std::pair<std::vector<int>, int>, int> created_;  // this rank's creations per (ranks, tag)
};

}  // namespace

InProcessJob::InProcessJob(int ranks) {
  if (ranks <= 0) throw std::invalid_argument(fmt::format("InProcessJob: {} ranks: expected at least 1", ranks));
  state_ = std::make_shared<State>(ranks);
}

InProcessJob::~InProcessJob() = default;

int InProcessJob::size() const { return state_->world.size(); }

std::unique_ptr<JobCommsFactory> InProcessJob::factory(int rank) {
  if (rank < 0 || rank >= size())
    throw std::invalid_argument(fmt::format("InProcessJob: rank {} is not a rank of 0..{}", rank, size() - 1));
  {
    MutexLock lock(state_->mutex);
    if (state_->handed_out[static_cast<std::size_t>(rank)])
      throw std::logic_error(fmt::format("InProcessJob: the factory of rank {} was already taken", rank));
    state_->handed_out[static_cast<std::size_t>(rank)] = true;
  }
  return std::make_unique<InProcessFactory>(state_, rank);
}

}  // namespace cellgan
