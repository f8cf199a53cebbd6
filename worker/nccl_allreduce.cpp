// The NCCL all-reduce (see nccl_allreduce.h). CELLGAN_NCCL is defined for
// this file alone where the build has NCCL.
#include "worker/nccl_allreduce.h"

#include <stdexcept>

#ifdef CELLGAN_NCCL
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>

#include "common/comm/protocol.h"
#include "common/idle_backoff.h"
#include "worker/two_level_allreduce.h"
#endif

namespace cellgan {

#ifdef CELLGAN_NCCL
namespace {

using namespace std::chrono_literals;

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(fmt::format("allreduce nccl: {}: {}", what, cudaGetErrorString(status)));
}

void check_nccl(ncclResult_t status, const char* what, ncclComm_t comm = nullptr) {
  if (status == ncclSuccess || status == ncclInProgress) return;
  const char* detail = comm != nullptr ? ncclGetLastError(comm) : "";
  throw std::runtime_error(fmt::format("allreduce nccl: {}: {}{}{}", what, ncclGetErrorString(status),
                                       detail != nullptr && *detail != '\0' ? ": " : "", detail ? detail : ""));
}

// Until NCCL has finished what `comm` was given (and, with `stream_too`,
// the default stream its kernels run on): none, or the interruption that
// came first. On an interruption or NCCL's error (which throws), `comm` is
// aborted and `aborted` set.
std::optional<Interruption> wait_for(ncclComm_t comm, bool stream_too, WorkerExchange& exchange, bool& aborted) {
  IdleBackoff backoff(std::chrono::microseconds(20), std::chrono::microseconds(2000));
  for (;;) {
    ncclResult_t state = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError", comm);
    if (state != ncclSuccess && state != ncclInProgress) {
      const std::string detail = ncclGetLastError(comm) ? ncclGetLastError(comm) : "";
      ncclCommAbort(comm);
      aborted = true;
      throw std::runtime_error(fmt::format("allreduce nccl: {}{}{}", ncclGetErrorString(state),
                                           detail.empty() ? "" : ": ", detail));
    }
    if (state == ncclSuccess) {
      if (!stream_too) return std::nullopt;
      const cudaError_t done = cudaStreamQuery(nullptr);
      if (done == cudaSuccess) return std::nullopt;
      if (done != cudaErrorNotReady) check_cuda(done, "the all-reduce's stream");
    }
    if (auto interruption = exchange.interrupted()) {
      ncclCommAbort(comm);
      aborted = true;
      return interruption;
    }
    backoff.after_round(false);
  }
}

// What both NCCL all-reduces share: the GPU, sum() staged through it, and
// the communicators' end.
class NcclStaged : public GradientAllreduce {
 public:
  NcclStaged(WorkerExchange& exchange, int device) : exchange_(exchange), device_(device) {}
  ~NcclStaged() override {
    if (staging_ != nullptr) cudaFree(staging_);
  }
  NcclStaged(const NcclStaged&) = delete;
  NcclStaged& operator=(const NcclStaged&) = delete;

  bool sums_on_device() const override { return true; }

  std::optional<Interruption> sum(std::vector<float>& values) override {
    const std::size_t bytes = values.size() * sizeof(float);
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    if (bytes > staging_bytes_) {
      if (staging_ != nullptr) check_cuda(cudaFree(staging_), "cudaFree");
      staging_ = nullptr;
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&staging_), bytes), "cudaMalloc");
      staging_bytes_ = bytes;
    }
    check_cuda(cudaMemcpy(staging_, values.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the GPU");
    if (auto interruption = sum_on_device(staging_, values.size())) return interruption;
    check_cuda(cudaMemcpy(values.data(), staging_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
    return std::nullopt;
  }

  WorkerExchange& exchange() override { return exchange_; }

 protected:
  // Ends `comm` unless an interruption or an error has (nothing is left to
  // finish with the others: every sum has completed).
  void end(ncclComm_t comm) {
    if (comm != nullptr && !aborted_) ncclCommAbort(comm);
  }
  void start_on_device() {
    if (aborted_) throw std::logic_error("allreduce nccl: used after an interruption or an error");
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  }

  WorkerExchange& exchange_;
  int device_;
  bool aborted_ = false;  // an interruption or an error came

 private:
  float* staging_ = nullptr;  // sum()'s buffer on the GPU
  std::size_t staging_bytes_ = 0;
};

class NcclAllreduce final : public NcclStaged {
 public:
  NcclAllreduce(WorkerExchange& exchange, int device, ncclComm_t comm) : NcclStaged(exchange, device), comm_(comm) {}
  ~NcclAllreduce() override { end(comm_); }
  NcclAllreduce(const NcclAllreduce&) = delete;
  NcclAllreduce& operator=(const NcclAllreduce&) = delete;

  std::optional<Interruption> sum_on_device(float* values, std::size_t count) override {
    start_on_device();
    tally_opaque_sum(count);
    check_nccl(ncclAllReduce(values, values, count, ncclFloat32, ncclSum, comm_, nullptr), "ncclAllReduce", comm_);
    return wait_for(comm_, true, exchange_, aborted_);
  }

 private:
  ncclComm_t comm_;
};

// Two levels: ncclReduce onto the node leader's GPU, the leaders' host
// copies summed by `across_`, ncclBroadcast from the leader (no NCCL for a
// node of one worker).
class NcclTwoLevel final : public NcclStaged {
 public:
  NcclTwoLevel(WorkerExchange& exchange, int device, ncclComm_t node, std::unique_ptr<GradientAllreduce> across)
      : NcclStaged(exchange, device), node_(node), across_(std::move(across)) {}
  ~NcclTwoLevel() override { end(node_); }
  NcclTwoLevel(const NcclTwoLevel&) = delete;
  NcclTwoLevel& operator=(const NcclTwoLevel&) = delete;

  std::optional<Interruption> sum_on_device(float* values, std::size_t count) override {
    start_on_device();
    tally_opaque_sum(count);
    if (node_ != nullptr) {
      check_nccl(ncclReduce(values, values, count, ncclFloat32, ncclSum, 0, node_, nullptr), "ncclReduce", node_);
      if (auto interruption = wait_for(node_, true, exchange_, aborted_)) return interruption;
    }
    if (across_) {
      host_.resize(count);
      const std::size_t bytes = count * sizeof(float);
      check_cuda(cudaMemcpy(host_.data(), values, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
      if (auto interruption = sum_by(*across_, host_)) return interruption;
      check_cuda(cudaMemcpy(values, host_.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the GPU");
    }
    if (node_ == nullptr) return std::nullopt;
    check_nccl(ncclBroadcast(values, values, count, ncclFloat32, 0, node_, nullptr), "ncclBroadcast", node_);
    return wait_for(node_, true, exchange_, aborted_);
  }

 private:
  ncclComm_t node_;  // the node's workers, the leader first; null for a node of one
  std::unique_ptr<GradientAllreduce> across_;  // on a node's leader, with several nodes
  std::vector<float> host_;  // the leader's copy for across_
};

// Joins one NCCL communicator of `members` (LOCAL ranks, ascending, this
// worker's among them) on GPU `cuda_device`: members[0] makes the unique
// id and sends it to the others (kTagNcclId). Or the interruption.
Waited<ncclComm_t> join_members(WorkerExchange& exchange, const std::vector<int>& members, int cuda_device) {
  check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
  const int me = exchange.local_rank();
  const int root = members.front();
  ncclUniqueId id;
  if (me == root) {
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&id);
    for (int w : members)
      if (w != root) exchange.send_local(w, kTagNcclId, Bytes(bytes, bytes + sizeof id));
  } else {
    Waited<Message> got = exchange.receive_local(root, kTagNcclId);
    if (auto* interruption = std::get_if<Interruption>(&got)) return std::move(*interruption);
    const Bytes& payload = std::get<Message>(got).payload;
    if (payload.size() != sizeof id)
      throw std::runtime_error(fmt::format("allreduce nccl: worker {} sent a unique id of {} bytes, expected {}",
                                           root + 1, payload.size(), sizeof id));
    std::memcpy(&id, payload.data(), sizeof id);
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // joining waits for every member: wait_for() keeps an ear on the master meanwhile
  ncclComm_t comm = nullptr;
  const auto index = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  check_nccl(ncclCommInitRankConfig(&comm, static_cast<int>(members.size()), id, index, &config),
             "ncclCommInitRankConfig", comm);
  bool aborted = false;
  if (auto interruption = wait_for(comm, false, exchange, aborted)) return std::move(*interruption);
  return comm;
}

}  // namespace

Waited<std::unique_ptr<GradientAllreduce>> join_nccl(WorkerExchange& exchange, int cuda_device) {
  std::vector<int> everyone(static_cast<std::size_t>(exchange.local_size()));
  std::iota(everyone.begin(), everyone.end(), 0);
  Waited<ncclComm_t> joined = join_members(exchange, everyone, cuda_device);
  if (auto* interruption = std::get_if<Interruption>(&joined)) return std::move(*interruption);
  return std::unique_ptr<GradientAllreduce>(
      std::make_unique<NcclAllreduce>(exchange, cuda_device, std::get<ncclComm_t>(joined)));
}

Waited<std::unique_ptr<GradientAllreduce>> join_nccl_two_level(WorkerExchange& exchange, int cuda_device,
                                                               const NodeMap& nodes, AllreduceKind across,
                                                               WireCompression compression) {
  if (nodes.workers() != exchange.local_size())
    throw std::invalid_argument("join_nccl_two_level: the node map's workers differ from LOCAL's");
  const std::vector<int> members = nodes.members(nodes.node_of(exchange.local_rank()));
  ncclComm_t node = nullptr;
  if (members.size() > 1) {
    Waited<ncclComm_t> joined = join_members(exchange, members, cuda_device);
    if (auto* interruption = std::get_if<Interruption>(&joined)) return std::move(*interruption);
    node = std::get<ncclComm_t>(joined);
  }
  return std::unique_ptr<GradientAllreduce>(std::make_unique<NcclTwoLevel>(
      exchange, cuda_device, node, make_across_nodes(exchange, nodes, across, compression)));
}

#else

Waited<std::unique_ptr<GradientAllreduce>> join_nccl(WorkerExchange& /*exchange*/, int /*cuda_device*/) {
  throw std::logic_error("allreduce nccl: this cellgan was built without NCCL");
}

Waited<std::unique_ptr<GradientAllreduce>> join_nccl_two_level(WorkerExchange& /*exchange*/, int /*cuda_device*/,
                                                               const NodeMap& /*nodes*/, AllreduceKind /*across*/,
                                                               WireCompression /*compression*/) {
  throw std::logic_error("allreduce nccl: this cellgan was built without NCCL");
}

#endif

}  // namespace cellgan
