// The two-level all-reduce (configuration data_parallel.hierarchy:
// two_level; seed 000's hierarchical all-reduce), a GradientAllreduce
// (gradient_allreduce.h) over the nodes of a NodeMap (node_map.h):
//  1. inside each node, every member sends its buffer to the node's
//     leader, which sums them in member order, in float32;
//  2. the leaders sum their nodes' partial sums with the configured
//     algorithm across nodes, rounded to the wire's precision: ring or
//     reduce_broadcast over point-to-point messages among the leaders
//     only, or mpi, MPI_Iallreduce (float32) over a communicator of the
//     leaders (WorkerExchange::allreduce_among), its result then rounded;
//  3. each leader sends the sum to its node's members.
// Only the leaders' messages cross nodes: 2(N−1)/N of the buffer per
// leader for a ring of N nodes, against 2(W−1)/W for every worker of a flat
// ring. Every worker ends with the same bits. The sum is the flat one
// reassociated by node, so it differs from flat's in the last bits of a
// float32 sum of W terms; with one node it is reduce_broadcast's, to the
// bit.
//
// nccl is not summed here (the configuration refuses it with two_level).
// Thread-safety: as gradient_allreduce.h.
#pragma once

#include <memory>

#include "worker/gradient_allreduce.h"
#include "worker/node_map.h"

namespace cellgan {

class TwoLevelAllreduce final : public GradientAllreduce {
 public:
  // `exchange` (LOCAL) must outlive this; nodes.workers() must equal its
  // size. std::invalid_argument otherwise, std::logic_error for `across`
  // nccl.
  TwoLevelAllreduce(WorkerExchange& exchange, NodeMap nodes, AllreduceKind across, WireCompression compression);
  ~TwoLevelAllreduce() override;
  [[nodiscard]] std::optional<Interruption> sum(std::vector<float>& values) override;
  WorkerExchange& exchange() override { return exchange_; }

  // What crossed nodes: the across-node algorithm's own tally (zero for a
  // worker that leads no node, or for one node).
  const AllreduceTally& across_nodes() const;

 private:
  WorkerExchange& exchange_;
  NodeMap nodes_;
  WireCompression compression_;
  std::vector<int> members_;  // this worker's node, ascending; members_[0] leads it
  std::unique_ptr<GradientAllreduce> across_;  // make_across_nodes: on a leader of a multi-node job
  AllreduceTally no_crossing_;
};

// Step 2 alone, for a worker of `exchange` (LOCAL) that leads a node of
// `nodes`: `across` (ring, reduce_broadcast or mpi) over the leaders only,
// its sum in the wire's precision. Null for a worker that leads no node,
// or when there is one node. std::logic_error for nccl.
std::unique_ptr<GradientAllreduce> make_across_nodes(WorkerExchange& exchange, const NodeMap& nodes,
                                                     AllreduceKind across, WireCompression compression);

// The data-parallel layout's all-reduce for `config`: flat
// (make_gradient_allreduce) or, as config.hierarchy resolves over `nodes`,
// two-level. kAuto is two-level when `nodes` spans more than one node and
// the algorithm is not nccl.
std::unique_ptr<GradientAllreduce> make_layout_allreduce(const DataParallelConfig& config, WorkerExchange& exchange,
                                                         const NodeMap& nodes);
// Whether make_layout_allreduce gives the two-level all-reduce.
bool two_level(const DataParallelConfig& config, const NodeMap& nodes);

// The nodes of the workers of `exchange` as `config` says: by
// ranks_per_node when set, else by the host names the workers exchange
// (exchange_hosts, a collective), or a single node for hierarchy flat
// (nothing is exchanged then).
[[nodiscard]] Waited<NodeMap> find_nodes(const DataParallelConfig& config, WorkerExchange& exchange,
                                         const std::string& host);

}  // namespace cellgan
