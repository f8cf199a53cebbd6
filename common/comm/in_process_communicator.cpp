// The in-process Communicator for unit tests (see in_process_communicator.h).
//
// - Each rank has a mailbox: a deque of messages under a mutex, in arrival
//   order. A receive takes the first message that matches, so messages of
//   one (source, tag) pair come out in send order, as with MPI.
// - Sends are delivered at once; pending_sends() is always 0.
// - gather(), barrier() and start_allreduce_sum() share one collective slot guarded by a mutex and
//   a condition variable. Each round has a generation number: the last rank
//   to arrive publishes the round's result and advances the generation,
//   which wakes the others. An allreduce sums the contributions in rank
//   order, so every rank gets the same bits; it only arrives, and its
//   done() looks whether the round is complete. The next round cannot complete before the root
//   has taken its result, since it needs the root too.
// - subgroup(): the first member to call it makes the new network's State
//   and leaves it, under (ranks, tag), for the others, the last of whom
//   removes it; no one waits.
//
// Thread-safety: InProcessNetwork and its State are thread-safe; each
// communicator belongs to one thread. Communicators share the State, so
// they may outlive the network.
#include "common/comm/in_process_communicator.h"

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <stdexcept>
#include <vector>

#include <fmt/core.h>

#include "common/thread_annotations.h"

namespace cellgan {

struct InProcessNetwork::State {
  enum class Collective { kGather, kBarrier, kAllreduce };

  struct Mailbox {
    Mutex mutex;
    std::deque<Message> messages GUARDED_BY(mutex);  // in arrival order
  };

  explicit State(int n) : size(n), mailboxes(static_cast<std::size_t>(n)), handed_out(n, false) {}

  const int size;
  std::vector<Mailbox> mailboxes;  // one per rank; never resized

  Mutex handout_mutex;
  std::vector<bool> handed_out GUARDED_BY(handout_mutex);

  // The collective slot.
  Mutex collective_mutex;
  CondVar collective_done;
  std::uint64_t generation GUARDED_BY(collective_mutex) = 0;  // rounds completed so far
  int arrived GUARDED_BY(collective_mutex) = 0;               // members in the current round
  Collective kind GUARDED_BY(collective_mutex) = Collective::kBarrier;
  int root GUARDED_BY(collective_mutex) = 0;
  std::vector<Bytes> contributions GUARDED_BY(collective_mutex);  // the current round's, indexed by rank
  std::vector<Bytes> completed GUARDED_BY(collective_mutex);      // the last completed round's
  std::vector<float> reduced GUARDED_BY(collective_mutex);        // the last completed allreduce's sum

  // Subgroups being made: (ranks, tag) -> their State and how many
  // members have taken it.
  Mutex subgroups_mutex;
  std::map<std::pair<std::vector<int>, int>, std::pair<std::shared_ptr<State>, std::size_t>> subgroups
      GUARDED_BY(subgroups_mutex);

  // The State of the subgroup (ranks, tag) for one of its members.
  std::shared_ptr<State> join_subgroup(const std::vector<int>& ranks, int tag) {
    MutexLock lock(subgroups_mutex);
    auto& [sub, taken] = subgroups[{ranks, tag}];
    if (!sub) sub = std::make_shared<State>(static_cast<int>(ranks.size()));
    std::shared_ptr<State> mine = sub;
    if (++taken == ranks.size()) subgroups.erase({ranks, tag});
    return mine;
  }

  // One member's arrival in a collective round; returns the round's
  // ticket (the rounds completed before it). The last to arrive completes
  // the round.
  std::uint64_t arrive(int rank, Collective what, int round_root, const Bytes& payload) REQUIRES(collective_mutex) {
    if (arrived == 0) {
      kind = what;
      root = round_root;
      contributions.assign(static_cast<std::size_t>(size), Bytes());
    } else if (kind != what || root != round_root) {
      throw std::logic_error(fmt::format(
          "in-process collective: rank {} called a different collective or root than the others", rank));
    }
    contributions[static_cast<std::size_t>(rank)] = payload;
    const std::uint64_t ticket = generation;
    if (++arrived == size) {
      if (what == Collective::kAllreduce) sum_contributions(rank);
      completed = std::move(contributions);
      contributions.clear();
      arrived = 0;
      ++generation;
      collective_done.notify_all();
    }
    return ticket;
  }

  // One member's part in a gather or barrier; returns the gathered payloads
  // at the root of a gather, an empty vector otherwise.
  std::vector<Bytes> join(int rank, Collective what, int round_root, const Bytes& payload) {
    MutexLock lock(collective_mutex);
    const std::uint64_t ticket = arrive(rank, what, round_root, payload);
    while (generation == ticket) lock.wait(collective_done);
    if (what == Collective::kGather && rank == round_root) return std::move(completed);
    return {};
  }

  // Copies the sum of the allreduce round `ticket` into `values` once that
  // round is complete; false until then. Rounds after it cannot complete
  // before this member has taken it, since they need it too.
  bool take_sum(std::uint64_t ticket, std::vector<float>& values) {
    MutexLock lock(collective_mutex);
    if (generation == ticket) return false;
    std::memcpy(values.data(), reduced.data(), reduced.size() * sizeof(float));
    return true;
  }

  // The float32 sum of the round's contributions, in rank order, into
  // `reduced`.
  void sum_contributions(int rank) REQUIRES(collective_mutex) {
    const std::size_t bytes = contributions.front().size();
    for (const Bytes& c : contributions)
      if (c.size() != bytes)
        throw std::logic_error(fmt::format("in-process allreduce: rank {} saw contributions of different lengths", rank));
    reduced.assign(bytes / sizeof(float), 0.0f);
    for (const Bytes& c : contributions) {
      const auto* v = reinterpret_cast<const float*>(c.data());
      for (std::size_t i = 0; i < reduced.size(); ++i) reduced[i] += v[i];
    }
  }
};

namespace {

class InProcessCommunicator final : public Communicator {
 public:
  class Sum final : public PendingSum {
   public:
    Sum(std::shared_ptr<InProcessNetwork::State> state, std::uint64_t ticket, std::vector<float>& values)
        : state_(std::move(state)), ticket_(ticket), values_(values) {}
    bool done() override { return done_ || (done_ = state_->take_sum(ticket_, values_)); }

   private:
    std::shared_ptr<InProcessNetwork::State> state_;
    std::uint64_t ticket_;
    std::vector<float>& values_;
    bool done_ = false;
  };

  InProcessCommunicator(std::shared_ptr<InProcessNetwork::State> state, int rank)
      : state_(std::move(state)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return state_->size; }

  void send(int dest, int tag, Bytes payload) override {
    check_rank(dest, "send: destination");
    if (tag < 0) throw std::invalid_argument(fmt::format("send: tag {} is negative", tag));
    auto& mailbox = state_->mailboxes[static_cast<std::size_t>(dest)];
    MutexLock lock(mailbox.mutex);
    mailbox.messages.push_back(Message{rank_, tag, std::move(payload)});
  }

  std::optional<Message> try_receive(int source, int tag) override {
    if (source != kAnySource) check_rank(source, "try_receive: source");
    auto& mailbox = state_->mailboxes[static_cast<std::size_t>(rank_)];
    MutexLock lock(mailbox.mutex);
    const auto it = std::find_if(mailbox.messages.begin(), mailbox.messages.end(), [&](const Message& m) {
      return (source == kAnySource || m.source == source) && (tag == kAnyTag || m.tag == tag);
    });
    if (it == mailbox.messages.end()) return std::nullopt;
    Message message = std::move(*it);
    mailbox.messages.erase(it);
    return message;
  }

  std::size_t pending_sends() override { return 0; }

  std::vector<Bytes> gather(int root, const Bytes& payload) override {
    check_rank(root, "gather: root");
    return state_->join(rank_, InProcessNetwork::State::Collective::kGather, root, payload);
  }

  void barrier() override {
    state_->join(rank_, InProcessNetwork::State::Collective::kBarrier, 0, Bytes());
  }

  std::unique_ptr<PendingSum> start_allreduce_sum(std::vector<float>& values) override {
    const auto* first = reinterpret_cast<const std::uint8_t*>(values.data());
    const Bytes mine(first, first + values.size() * sizeof(float));
    std::uint64_t ticket = 0;
    {
      MutexLock lock(state_->collective_mutex);
      ticket = state_->arrive(rank_, InProcessNetwork::State::Collective::kAllreduce, 0, mine);
    }
    return std::make_unique<Sum>(state_, ticket, values);
  }

  std::unique_ptr<Communicator> subgroup(const std::vector<int>& ranks, int tag) override {
    if (tag < 0) throw std::invalid_argument(fmt::format("subgroup: tag {} is negative", tag));
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      check_rank(ranks[i], "subgroup: rank");
      if (i > 0 && ranks[i] <= ranks[i - 1]) throw std::invalid_argument("subgroup: ranks must be strictly ascending");
    }
    const auto me = std::find(ranks.begin(), ranks.end(), rank_);
    if (me == ranks.end())
      throw std::invalid_argument(fmt::format("subgroup: called by rank {}, which is not a member", rank_));
    return std::make_unique<InProcessCommunicator>(state_->join_subgroup(ranks, tag),
                                                   static_cast<int>(me - ranks.begin()));
  }

 private:
  void check_rank(int rank, const char* what) const {
    if (rank < 0 || rank >= state_->size) {
      throw std::invalid_argument(fmt::format("{} {} is not a rank of 0..{}", what, rank, state_->size - 1));
    }
  }

  std::shared_ptr<InProcessNetwork::State> state_;
  int rank_;
};

}  // namespace

InProcessNetwork::InProcessNetwork(int size) {
  if (size <= 0) throw std::invalid_argument(fmt::format("InProcessNetwork: size {} must be positive", size));
  state_ = std::make_shared<State>(size);
}

InProcessNetwork::~InProcessNetwork() = default;

int InProcessNetwork::size() const { return state_->size; }

std::unique_ptr<Communicator> InProcessNetwork::communicator(int rank) {
  if (rank < 0 || rank >= state_->size) {
    throw std::invalid_argument(
        fmt::format("InProcessNetwork: rank {} is not a rank of 0..{}", rank, state_->size - 1));
  }
  {
    MutexLock lock(state_->handout_mutex);
    if (state_->handed_out[static_cast<std::size_t>(rank)]) {
      throw std::logic_error(fmt::format("InProcessNetwork: the communicator of rank {} was already taken", rank));
    }
    state_->handed_out[static_cast<std::size_t>(rank)] = true;
  }
  return std::make_unique<InProcessCommunicator>(state_, rank);
}

}  // namespace cellgan
