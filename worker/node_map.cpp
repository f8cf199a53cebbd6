// Nodes of the workers (see node_map.h).
#include "worker/node_map.h"

#include <map>
#include <stdexcept>

#include "common/comm/protocol.h"

namespace cellgan {

NodeMap::NodeMap(std::vector<int> node_of) : node_of_(std::move(node_of)) {
  if (node_of_.empty()) throw std::invalid_argument("NodeMap: no workers");
  // Renumber in order of first appearance, so equal maps compare equal.
  std::map<int, int> number;
  for (int& n : node_of_) {
    const auto [it, added] = number.emplace(n, static_cast<int>(number.size()));
    n = it->second;
  }
  nodes_ = static_cast<int>(number.size());
}

NodeMap NodeMap::by_count(int workers, int ranks_per_node) {
  if (workers < 1 || ranks_per_node < 1) throw std::invalid_argument("NodeMap::by_count: workers and ranks per node >= 1");
  std::vector<int> node_of;
  for (int r = 0; r < workers; ++r) node_of.push_back(r / ranks_per_node);
  return NodeMap(std::move(node_of));
}

NodeMap NodeMap::by_host(const std::vector<std::string>& hosts) {
  std::map<std::string, int> number;
  std::vector<int> node_of;
  for (const std::string& host : hosts) node_of.push_back(number.emplace(host, static_cast<int>(number.size())).first->second);
  return NodeMap(std::move(node_of));
}

std::vector<int> NodeMap::members(int node) const {
  std::vector<int> out;
  for (int r = 0; r < workers(); ++r)
    if (node_of_[static_cast<std::size_t>(r)] == node) out.push_back(r);
  return out;
}

std::vector<int> NodeMap::leaders() const {
  std::vector<int> out;
  for (int n = 0; n < nodes_; ++n) out.push_back(members(n).front());
  return out;
}

Waited<std::vector<std::string>> exchange_hosts(WorkerExchange& exchange, const std::string& mine) {
  const int w = exchange.local_size();
  const int me = exchange.local_rank();
  for (int r = 0; r < w; ++r)
    if (r != me) exchange.send_local(r, kTagHosts, Bytes(mine.begin(), mine.end()));
  std::vector<std::string> hosts(static_cast<std::size_t>(w));
  hosts[static_cast<std::size_t>(me)] = mine;
  for (int r = 0; r < w; ++r) {
    if (r == me) continue;
    Waited<Message> in = exchange.receive_local(r, kTagHosts);
    if (auto* interruption = std::get_if<Interruption>(&in)) return std::move(*interruption);
    const Bytes& payload = std::get<Message>(in).payload;
    hosts[static_cast<std::size_t>(r)] = std::string(payload.begin(), payload.end());
  }
  return hosts;
}

}  // namespace cellgan
