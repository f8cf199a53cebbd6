// A training step captured as a CUDA graph and replayed (docs/architecture.md,
// "CUDA graphs"; runtime.cuda_graphs): a step of small kernels costs the
// GPU its launches, one replay launches them all at once.
//
// CudaStepGraph::run(work) calls `work`, a function that only enqueues GPU
// work on the current stream and touches only tensors that keep their
// storage from call to call (static inputs filled before the call,
// parameters, gradients, optimizer state): its first kWarmups calls run
// eagerly on a side stream (the caching allocator and the autograd engine
// settle there), the next is captured on that stream with
// at::cuda::CUDAGraph and then replayed, and every later call replays the
// graph without calling `work`. So `work` must not read the host (no
// .item(), no copies to or from the CPU, no draws from a CPU generator) and
// its host-side effects happen in warm-up and capture only.
//
// If capturing fails (an operation that synchronises, a kernel that cannot
// be captured), a warning is logged once per process and `work` runs
// eagerly from then on, in every CudaStepGraph of the process (LibTorch's
// capture state is left as the failure left it, so no graph replays): the
// step is done once either way, and no result is lost. Without CUDA graphs in the build (a LibTorch without CUDA:
// built() false), run() always calls `work`.
//
// The header names no Torch CUDA type; the graph lives in
// cuda_step_graph.cpp, which uses them only when compiled with
// CELLGAN_CUDA_GRAPHS (common/nn/CMakeLists.txt: LibTorch has CUDA).
//
// Thread-safety: one thread at a time per object; the graph's tensors are
// the caller's. The graphs of one process take turns (a process-wide lock
// around each run() and destruction), so ranks that are threads of one
// process may each have theirs.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "common/config.h"

namespace cellgan {

class CudaStepGraph {
 public:
  static constexpr int kWarmups = 3;

  CudaStepGraph();
  ~CudaStepGraph();
  CudaStepGraph(const CudaStepGraph&) = delete;
  CudaStepGraph& operator=(const CudaStepGraph&) = delete;

  // True when this build captures CUDA graphs (LibTorch with CUDA).
  static bool built();

  // One step: `work` run, captured or replayed as described above.
  void run(const std::function<void()>& work);

  // True once a graph is captured (later run() calls replay it).
  bool replaying() const;
  // True once capturing failed (later run() calls run `work` eagerly).
  bool gave_up() const { return gave_up_; }
  // True once any capture of this process failed (no graph replays since).
  static bool a_capture_failed();
  // How many steps the graphs of this process have replayed so far.
  static std::int64_t replays();

 private:
  struct Graph;  // the CUDA graph and its side stream (cuda_step_graph.cpp)
  std::unique_ptr<Graph> graph_;
  int calls_ = 0;
  bool gave_up_ = false;
};

// Whether the lockstep steps of a run on `device` are captured:
// runtime.cuda_graphs on, or auto on a GPU with built().
bool cuda_graphs_wanted(const Config& config, const c10::Device& device);

// InputError, one line naming runtime.cuda_graphs, when it is `on` and the
// device is not a GPU or the build has no CUDA graphs.
void check_cuda_graphs(const Config& config, const c10::Device& device);

}  // namespace cellgan
