// A step captured as a CUDA graph and replayed (cuda_step_graph.h).
#include "common/nn/cuda_step_graph.h"

#include <torch/version.h>

#include <atomic>
#include <exception>
#include <mutex>

#include <fmt/format.h>

#include "common/error.h"
#include "common/log.h"

#ifdef CELLGAN_CUDA_GRAPHS
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace cellgan {

#ifdef CELLGAN_CUDA_GRAPHS

namespace {

// LibTorch's CUDAGraph keeps process-wide state without a lock of its own
// (the default CUDA generator's bookkeeping of graphs being captured and
// replayed), and two graphs' side streams, taken from LibTorch's pool, may
// be the same stream. Ranks that are threads of one process (the in-process
// job) therefore take turns: warm-up, capture, replay and destruction of
// every graph hold this lock. In an MPI process one thread trains, and it
// costs nothing.
std::recursive_mutex& graphs_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

}  // namespace

struct CudaStepGraph::Graph {
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  at::cuda::CUDAGraph graph;
  bool captured = false;

  // `body` on the side stream, ordered after and before the current
  // stream's work.
  template <typename Body>
  void on_side_stream(Body&& body) {
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream();
    at::cuda::CUDAEvent before;
    before.record(current);
    before.block(side);
    {
      const c10::cuda::CUDAStreamGuard guard(side);
      body();
    }
    at::cuda::CUDAEvent after;
    after.record(side);
    after.block(current);
  }

  // Captures `work` (its kernels recorded, not run). Thread-local capture
  // (LibTorch 2): the process's other threads may use the GPU meanwhile, but
  // not another graph (graphs_mutex()).
  void capture(const std::function<void()>& work) {
    on_side_stream([&] {
#if TORCH_VERSION_MAJOR >= 2
      graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
#else
      graph.capture_begin();
#endif
      try {
        work();
      } catch (...) {
        end_failed_capture();
        throw;
      }
      graph.capture_end();
    });
    captured = true;
  }

  // After a throw inside a capture: the stream out of capture mode, the
  // partial graph dropped, the CUDA error cleared.
  void end_failed_capture() noexcept {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(side.stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
      cudaGraph_t partial = nullptr;
      if (cudaStreamEndCapture(side.stream(), &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
    }
    (void)cudaGetLastError();
  }
};

bool CudaStepGraph::built() { return true; }

bool CudaStepGraph::replaying() const { return graph_ && graph_->captured; }

namespace {

// Set by the first failed capture of the process. LibTorch's own state of a
// capture (the default CUDA generator's, the caching allocator's pool) is
// undone only by a capture that ends well, so after a failure no graph of
// the process replays again: a replay could throw, or run on that state.
std::atomic<bool> capture_failed{false};

void warn_once(const char* what) {
  if (capture_failed.exchange(true)) return;
  log::warn("runtime.cuda_graphs: capturing a training step failed ({}); the steps run without graphs", what);
}

}  // namespace

bool CudaStepGraph::a_capture_failed() { return capture_failed; }

namespace {
std::atomic<std::int64_t> replayed{0};
}  // namespace

std::int64_t CudaStepGraph::replays() { return replayed; }

CudaStepGraph::~CudaStepGraph() {
  const std::lock_guard<std::recursive_mutex> lock(graphs_mutex());
  graph_.reset();
}

void CudaStepGraph::run(const std::function<void()>& work) {
  if (gave_up_) return work();
  const std::lock_guard<std::recursive_mutex> lock(graphs_mutex());
  if (capture_failed) {
    gave_up_ = true;
    return work();
  }
  if (replaying()) {
    ++replayed;
    return graph_->graph.replay();
  }
  if (!graph_) graph_ = std::make_unique<Graph>();
  if (calls_++ < kWarmups) return graph_->on_side_stream(work);
  try {
    graph_->capture(work);
  } catch (const std::exception& e) {
    warn_once(e.what());
    graph_.reset();
    gave_up_ = true;
    return work();  // captured, not run: the step itself, once
  }
  ++replayed;
  graph_->graph.replay();
}

#else  // no CUDA graphs in this build: every step runs as it is

struct CudaStepGraph::Graph {};

bool CudaStepGraph::built() { return false; }

bool CudaStepGraph::replaying() const { return false; }

bool CudaStepGraph::a_capture_failed() { return false; }

std::int64_t CudaStepGraph::replays() { return 0; }

void CudaStepGraph::run(const std::function<void()>& work) {
  ++calls_;
  work();
}

CudaStepGraph::~CudaStepGraph() = default;

#endif

CudaStepGraph::CudaStepGraph() = default;

bool cuda_graphs_wanted(const Config& config, const c10::Device& device) {
  const std::string& mode = config.runtime.cuda_graphs;
  if (mode == "on") return true;
  return mode == "auto" && device.is_cuda() && CudaStepGraph::built();
}

void check_cuda_graphs(const Config& config, const c10::Device& device) {
  if (config.runtime.cuda_graphs != "on") return;
  if (!device.is_cuda())
    throw InputError(fmt::format("{}: runtime.cuda_graphs: on needs a GPU (the device is {}): expected auto or off",
                                 config.source, device.str()));
  if (!CudaStepGraph::built())
    throw InputError(fmt::format("{}: runtime.cuda_graphs: on needs a build against a LibTorch with CUDA graphs; "
                                 "this one has none: expected auto or off",
                                 config.source));
}

}  // namespace cellgan
