// Resolving runtime.device (see device.h).
#include "common/nn/device.h"

#include <ATen/Context.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"

namespace cellgan {
namespace {

// Repeatable GPU results, set once per process before the first CUDA work.
void make_gpu_results_repeatable() {
  static std::once_flag once;
  std::call_once(once, [] {
    // CUBLAS_WORKSPACE_CONFIG: visible_gpus(), which comes first, sets it.
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/true);
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
  });
}

}  // namespace

int node_local_rank() {
  // The MPI launcher's own first: under mpirun or Hydra inside a SLURM job,
  // every rank inherits SLURM_LOCALID of the step that started the launcher.
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    const long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0) return static_cast<int>(rank);
  }
  return 0;
}

int visible_gpus() {
  // The workspace setting must be in the environment before cuBLAS starts,
  // and asking for the GPUs is the first CUDA work of a rank.
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

torch::Device device_to_check(const std::string& spec, int local_rank, const std::string& what) {
  if (!is_device_spec(spec))
    throw InputError(fmt::format("{}: '{}' is not a device: expected auto, cpu, cuda or cuda:N", what, spec));
  if (spec == "cpu") return torch::Device(torch::kCPU);
  const int gpus = visible_gpus();
  if (spec == "auto" && gpus == 0) return torch::Device(torch::kCPU);
  if (gpus == 0)
    throw InputError(fmt::format("{}: {} asked for, but no GPU is visible (this LibTorch {}); expected cpu or auto",
                                 what, spec, torch::cuda::is_available() ? "sees none" : "was built without CUDA"));
  int index = local_rank % gpus;
  if (spec.rfind("cuda:", 0) == 0) {
    index = std::stoi(spec.substr(5));
    if (index >= gpus)
      throw InputError(fmt::format("{}: {} asked for, but {} GPU{} visible (cuda:0..cuda:{})", what, spec, gpus,
                                   gpus == 1 ? " is" : "s are", gpus - 1));
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

torch::Device resolve_device(const std::string& spec, int local_rank, const std::string& what) {
  const torch::Device device = device_to_check(spec, local_rank, what);
  if (!device.is_cuda()) return device;
  make_gpu_results_repeatable();
  // The rank's current GPU, so that work without an explicit device (and
  // the CUDA context) lands on it too.
  c10::impl::VirtualGuardImpl(c10::DeviceType::CUDA).setDevice(device);
  return device;
}

torch::Device resolve_device(const std::string& spec, const std::string& what) {
  return resolve_device(spec, node_local_rank(), what);
}

std::string describe_device(const torch::Device& device) {
  if (!device.is_cuda()) return "cpu";
  return fmt::format("cuda:{}", static_cast<int>(device.index()));
}

std::vector<double> host_values(const std::vector<torch::Tensor>& scalars) {
  if (scalars.empty()) return {};
  const torch::Tensor all = torch::stack(scalars).to(torch::kCPU).to(torch::kFloat64).contiguous();
  return std::vector<double>(all.data_ptr<double>(), all.data_ptr<double>() + all.numel());
}

torch::Tensor to_device_without_waiting(const torch::Tensor& host, const torch::Device& device) {
  if (!device.is_cuda() || !host.is_cpu()) return host.to(device);
  return host.pin_memory().to(torch::TensorOptions().device(device), /*non_blocking=*/true);
}

void copy_without_waiting(const torch::Tensor& from, torch::Tensor& into) {
  if (into.is_cuda() && from.is_cpu())
    into.copy_(from.pin_memory(), /*non_blocking=*/true);
  else
    into.copy_(from);
}

}  // namespace cellgan
