// Which node each worker of LOCAL runs on, for the two-level all-reduce
// (configuration keys data_parallel.hierarchy and .ranks_per_node).
//
// Nodes are numbered in the order of their first worker; a node's members
// are its workers in LOCAL order, and its leader is the first of them.
// Either every worker has said its host name (what MPI_COMM_TYPE_SHARED
// splits a communicator by: one node per host), or a count of ranks per
// node stands in for the hosts, so that one machine can play several nodes.
//
// Thread-safety: a value; exchange_hosts() is the training thread's, as
// the WorkerExchange it uses.
#pragma once

#include <string>
#include <vector>

#include "worker/worker_exchange.h"

namespace cellgan {

class NodeMap {
 public:
  // node_of[r]: the node of LOCAL rank r. std::invalid_argument when empty.
  explicit NodeMap(std::vector<int> node_of);
  // Workers 0..k-1 on node 0, k..2k-1 on node 1, and so on (the last node
  // may have fewer). std::invalid_argument unless workers, k >= 1.
  static NodeMap by_count(int workers, int ranks_per_node);
  // One node per distinct host name, in order of first appearance.
  static NodeMap by_host(const std::vector<std::string>& hosts);

  int workers() const { return static_cast<int>(node_of_.size()); }
  int nodes() const { return nodes_; }
  int node_of(int rank) const { return node_of_.at(static_cast<std::size_t>(rank)); }
  // The LOCAL ranks of `node`, ascending; the first is its leader.
  std::vector<int> members(int node) const;
  // The leader of every node, in node order.
  std::vector<int> leaders() const;

 private:
  std::vector<int> node_of_;
  int nodes_ = 0;
};

// Every worker's host name, in LOCAL order, each worker having sent
// `mine` to every other (kTagHosts); or the interruption that came first.
// A collective: every worker calls it once, at the same point.
[[nodiscard]] Waited<std::vector<std::string>> exchange_hosts(WorkerExchange& exchange, const std::string& mine);

}  // namespace cellgan
