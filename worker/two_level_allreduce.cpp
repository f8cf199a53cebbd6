// The two-level all-reduce (see two_level_allreduce.h).
#include "worker/two_level_allreduce.h"

#include <algorithm>
#include <stdexcept>

#include "common/comm/protocol.h"
#include "worker/wire_precision.h"

namespace cellgan {

namespace {

// The leaders as workers 0..N-1 of an exchange of their own: messages go
// over LOCAL to the leader's LOCAL rank, sums over their subgroup of LOCAL.
class LeaderExchange final : public WorkerExchange {
 public:
  LeaderExchange(WorkerExchange& local, std::vector<int> ranks) : local_(local), ranks_(std::move(ranks)) {
    me_ = static_cast<int>(std::find(ranks_.begin(), ranks_.end(), local.local_rank()) - ranks_.begin());
  }
  int local_rank() const override { return me_; }
  int local_size() const override { return static_cast<int>(ranks_.size()); }
  void send_local(int dest, int tag, Bytes payload) override { local_.send_local(rank(dest), tag, std::move(payload)); }
  Waited<Message> receive_local(int source, int tag) override { return local_.receive_local(rank(source), tag); }
  Waited<std::optional<Message>> try_receive_local(int source, int tag) override {
    return local_.try_receive_local(rank(source), tag);
  }
  std::optional<Interruption> interrupted() override { return local_.interrupted(); }
  std::optional<Interruption> allreduce_local(std::vector<float>& values) override {
    return local_.allreduce_among(ranks_, values);
  }
  std::optional<Interruption> allreduce_among(const std::vector<int>& leaders, std::vector<float>& values) override {
    std::vector<int> ranks;
    for (int leader : leaders) ranks.push_back(rank(leader));
    return local_.allreduce_among(ranks, values);
  }

 private:
  int rank(int leader) const { return ranks_.at(static_cast<std::size_t>(leader)); }
  WorkerExchange& local_;
  std::vector<int> ranks_;
  int me_ = 0;
};

// The across-node algorithm over the leaders' exchange: mpi sums float32,
// its result then rounded to the wire.
class AcrossNodes final : public GradientAllreduce {
 public:
  AcrossNodes(WorkerExchange& local, std::vector<int> leaders, AllreduceKind kind, WireCompression compression)
      : leaders_(local, std::move(leaders)), kind_(kind), compression_(compression) {
    algorithm_ = make_gradient_allreduce(kind, kind == AllreduceKind::kMpi ? WireCompression::kNone : compression,
                                         leaders_);
  }
  std::optional<Interruption> sum(std::vector<float>& values) override {
    std::optional<Interruption> interruption = algorithm_->sum(values);
    tally_ = algorithm_->tally();
    if (!interruption && kind_ == AllreduceKind::kMpi) round_to_wire(compression_, values.data(), values.size());
    return interruption;
  }
  WorkerExchange& exchange() override { return leaders_; }

 private:
  LeaderExchange leaders_;
  AllreduceKind kind_;
  WireCompression compression_;
  std::unique_ptr<GradientAllreduce> algorithm_;
};

}  // namespace

std::unique_ptr<GradientAllreduce> make_across_nodes(WorkerExchange& exchange, const NodeMap& nodes,
                                                     AllreduceKind across, WireCompression compression) {
  if (across == AllreduceKind::kNccl)
    throw std::logic_error("two_level: across nodes by ring, reduce_broadcast or mpi");
  const int me = exchange.local_rank();
  if (nodes.nodes() == 1 || nodes.members(nodes.node_of(me)).front() != me) return nullptr;
  return std::make_unique<AcrossNodes>(exchange, nodes.leaders(), across, compression);
}

TwoLevelAllreduce::TwoLevelAllreduce(WorkerExchange& exchange, NodeMap nodes, AllreduceKind across,
                                     WireCompression compression)
    : exchange_(exchange), nodes_(std::move(nodes)), compression_(compression) {
  if (nodes_.workers() != exchange.local_size())
    throw std::invalid_argument("TwoLevelAllreduce: the node map's workers differ from LOCAL's");
  members_ = nodes_.members(nodes_.node_of(exchange.local_rank()));
  across_ = make_across_nodes(exchange, nodes_, across, compression);
}

TwoLevelAllreduce::~TwoLevelAllreduce() = default;

const AllreduceTally& TwoLevelAllreduce::across_nodes() const {
  return across_ ? across_->tally() : no_crossing_;
}

std::optional<Interruption> TwoLevelAllreduce::sum(std::vector<float>& values) {
  if (exchange_.local_size() == 1) return std::nullopt;
  const std::size_t n = values.size();
  const auto send = [&](int dest) { send_wire(exchange_, dest, compression_, values.data(), n, tally_); };
  const int leader = members_.front();
  if (exchange_.local_rank() != leader) {  // 1 and 3, a member
    send(leader);
    Waited<Message> total = exchange_.receive_local(leader, kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&total)) return std::move(*interruption);
    decode_wire(compression_, std::get<Message>(total).payload, values.data(), n);
    return std::nullopt;
  }
  for (std::size_t m = 1; m < members_.size(); ++m) {  // 1, the leader
    Waited<Message> part = exchange_.receive_local(members_[m], kTagGradients);
    if (auto* interruption = std::get_if<Interruption>(&part)) return std::move(*interruption);
    add_wire(compression_, std::get<Message>(part).payload, values.data(), n);
  }
  if (across_) {  // 2
    if (auto interruption = sum_by(*across_, values)) return interruption;
  } else {
    round_to_wire(compression_, values.data(), n);
  }
  for (std::size_t m = 1; m < members_.size(); ++m) send(members_[m]);  // 3
  return std::nullopt;
}

bool two_level(const DataParallelConfig& config, const NodeMap& nodes) {
  switch (config.hierarchy) {
    case AllreduceHierarchy::kFlat: return false;
    case AllreduceHierarchy::kTwoLevel: return true;
    case AllreduceHierarchy::kAuto: return nodes.nodes() > 1 && config.allreduce != AllreduceKind::kNccl;
  }
  throw std::logic_error("unknown hierarchy");
}

std::unique_ptr<GradientAllreduce> make_layout_allreduce(const DataParallelConfig& config, WorkerExchange& exchange,
                                                         const NodeMap& nodes) {
  if (!two_level(config, nodes)) return make_gradient_allreduce(config.allreduce, config.compression, exchange);
  return std::make_unique<TwoLevelAllreduce>(exchange, nodes, config.allreduce, config.compression);
}

Waited<NodeMap> find_nodes(const DataParallelConfig& config, WorkerExchange& exchange, const std::string& host) {
  const int w = exchange.local_size();
  if (config.hierarchy == AllreduceHierarchy::kFlat) return NodeMap(std::vector<int>(static_cast<std::size_t>(w), 0));
  if (config.ranks_per_node > 0) return NodeMap::by_count(w, static_cast<int>(std::min<std::int64_t>(config.ranks_per_node, w)));
  Waited<std::vector<std::string>> hosts = exchange_hosts(exchange, host);
  if (auto* interruption = std::get_if<Interruption>(&hosts)) return std::move(*interruption);
  return NodeMap::by_host(std::get<std::vector<std::string>>(hosts));
}

}  // namespace cellgan
