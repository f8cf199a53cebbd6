// Where a rank computes: runtime.device (and the --device options of
// sample, score and classifier) resolved to a torch::Device.
//
// - "cpu": the CPU, always.
// - "cuda": a GPU; the one of index (node-local rank modulo the GPUs this
//   process sees), so that ranks spread over a node's GPUs and several ranks
//   may share one. The node-local rank is OMPI_COMM_WORLD_LOCAL_RANK, else
//   SLURM_LOCALID, else MPI_LOCALRANKID, else 0.
// - "cuda:N": GPU N; an error when fewer are visible.
// - "auto": "cuda" when LibTorch sees a GPU, else "cpu".
//
// Choosing a GPU also makes its results repeatable (docs/operations.md,
// "GPUs"): deterministic algorithms (warn-only: an op without a
// deterministic kernel warns instead of failing), cuDNN without
// benchmarking, and CUBLAS_WORKSPACE_CONFIG=:4096:8 unless the environment
// sets it, which cuBLAS reads when it first starts in the process. On the
// CPU nothing changes.
//
// Errors: InputError naming `what` (the key or option) when the spec is
// malformed or names a GPU that is not there. Thread-safety: any thread;
// the determinism settings are process-wide and set once.
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

namespace cellgan {

// The node-local rank from the launcher's environment: the first of
// OMPI_COMM_WORLD_LOCAL_RANK (Open MPI), MPI_LOCALRANKID (MPICH's Hydra)
// and SLURM_LOCALID (srun) set to a non-negative integer; 0 when none is.
int node_local_rank();

// `spec` as above for a process of node-local rank `local_rank`.
torch::Device resolve_device(const std::string& spec, int local_rank, const std::string& what = "runtime.device");
// The same for this process (node_local_rank()).
torch::Device resolve_device(const std::string& spec, const std::string& what = "runtime.device");
// The device resolve_device() would give, with its checks and errors, but
// without making it the current one or starting CUDA on it: for a process
// that only checks a configuration (cellgan launch, before any rank starts).
torch::Device device_to_check(const std::string& spec, int local_rank, const std::string& what = "runtime.device");

// "cpu" or "cuda:N": the form torch::Device(std::string) reads back.
std::string describe_device(const torch::Device& device);

// How many GPUs LibTorch sees (0 in a build without CUDA).
int visible_gpus();

// Scalar tensors (floating or boolean, all on one device) as doubles, in
// order: one copy to the host instead of a wait per value. Each value is
// the one item<double>() would read.
std::vector<double> host_values(const std::vector<torch::Tensor>& scalars);

// `host` on `device`, the same values: from the CPU to a GPU through
// pinned memory, ordered on the current stream without waiting for the
// device (a copy from pageable memory waits for it); else host.to().
torch::Tensor to_device_without_waiting(const torch::Tensor& host, const torch::Device& device);
// into <- from (the same sizes), in into's storage: from the host into a GPU
// as to_device_without_waiting() copies; otherwise an ordinary copy.
void copy_without_waiting(const torch::Tensor& from, torch::Tensor& into);

}  // namespace cellgan
