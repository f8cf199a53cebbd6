// The NCCL all-reduce (see nccl_allreduce.h). CELLGAN_NCCL is defined for
// this file alone where the build has NCCL.
#include "worker/nccl_allreduce.h"

#include <stdexcept>

#ifdef CELLGAN_NCCL
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <cstring>

#include "common/comm/protocol.h"
#include "common/idle_backoff.h"
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

class NcclAllreduce final : public GradientAllreduce {
 public:
  NcclAllreduce(WorkerExchange& exchange, int device, ncclComm_t comm)
      : exchange_(exchange), device_(device), comm_(comm) {}
  ~NcclAllreduce() override {
    // Every sum has completed, or the communicator is aborted already:
    // nothing is left to finish with the others.
    if (!aborted_) ncclCommAbort(comm_);
    if (staging_ != nullptr) cudaFree(staging_);
  }
  NcclAllreduce(const NcclAllreduce&) = delete;
  NcclAllreduce& operator=(const NcclAllreduce&) = delete;

  bool sums_on_device() const override { return true; }

  std::optional<Interruption> sum_on_device(float* values, std::size_t count) override {
    if (aborted_) throw std::logic_error("allreduce nccl: used after an interruption or an error");
    tally_opaque_sum(count);
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_nccl(ncclAllReduce(values, values, count, ncclFloat32, ncclSum, comm_, nullptr), "ncclAllReduce", comm_);
    return wait_for(comm_, true, exchange_, aborted_);
  }

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

 private:
  WorkerExchange& exchange_;
  int device_;
  ncclComm_t comm_;
  bool aborted_ = false;  // an interruption or an error came
  float* staging_ = nullptr;  // sum()'s buffer on the GPU
  std::size_t staging_bytes_ = 0;
};

}  // namespace

Waited<std::unique_ptr<GradientAllreduce>> join_nccl(WorkerExchange& exchange, int cuda_device) {
  check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
  ncclUniqueId id;
  if (exchange.local_rank() == 0) {
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&id);
    for (int w = 1; w < exchange.local_size(); ++w) exchange.send_local(w, kTagNcclId, Bytes(bytes, bytes + sizeof id));
  } else {
    Waited<Message> got = exchange.receive_local(0, kTagNcclId);
    if (auto* interruption = std::get_if<Interruption>(&got)) return std::move(*interruption);
    const Bytes& payload = std::get<Message>(got).payload;
    if (payload.size() != sizeof id)
      throw std::runtime_error(fmt::format("allreduce nccl: worker 1 sent a unique id of {} bytes, expected {}",
                                           payload.size(), sizeof id));
    std::memcpy(&id, payload.data(), sizeof id);
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // joining waits for every worker: wait_for() keeps an ear on the master meanwhile
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRankConfig(&comm, exchange.local_size(), id, exchange.local_rank(), &config),
             "ncclCommInitRankConfig", comm);
  bool aborted = false;
  if (auto interruption = wait_for(comm, false, exchange, aborted)) return std::move(*interruption);
  return std::unique_ptr<GradientAllreduce>(std::make_unique<NcclAllreduce>(exchange, cuda_device, comm));
}

#else

Waited<std::unique_ptr<GradientAllreduce>> join_nccl(WorkerExchange& /*exchange*/, int /*cuda_device*/) {
  throw std::logic_error("allreduce nccl: this cellgan was built without NCCL");
}

#endif

}  // namespace cellgan
