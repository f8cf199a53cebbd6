// CudaStepGraph (common/nn/cuda_step_graph.h) where no step is captured,
// and runtime.cuda_graphs resolved and checked. Capture itself runs on a GPU:
// tests/gpu/gpu_test.cpp.
#include "common/nn/cuda_step_graph.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "common/error.h"

namespace cellgan {
namespace {

Config with_graphs(const std::string& mode, const std::string& device = "auto") {
  Config c;
  c.source = "configs/run.yaml";
  c.runtime.cuda_graphs = mode;
  c.runtime.device = device;
  return c;
}

TEST(CudaStepGraph, OnTheCpuEveryStepRunsAsItIs) {
  CudaStepGraph graph;
  torch::Tensor x = torch::zeros({3});
  for (int i = 0; i < CudaStepGraph::kWarmups + 4; ++i) graph.run([&x] { x.add_(1.0); });
  EXPECT_TRUE(torch::equal(x, torch::full({3}, static_cast<double>(CudaStepGraph::kWarmups + 4))));
  EXPECT_FALSE(graph.replaying());
  EXPECT_FALSE(graph.gave_up());
}

TEST(CudaStepGraph, AutoCapturesOnlyOnAGpuOfABuildWithGraphs) {
  EXPECT_FALSE(cuda_graphs_wanted(with_graphs("auto"), torch::kCPU));
  EXPECT_FALSE(cuda_graphs_wanted(with_graphs("off"), torch::Device(torch::kCUDA, 0)));
  EXPECT_EQ(cuda_graphs_wanted(with_graphs("auto"), torch::Device(torch::kCUDA, 0)), CudaStepGraph::built());
  EXPECT_TRUE(cuda_graphs_wanted(with_graphs("on"), torch::Device(torch::kCUDA, 0)));
}

TEST(CudaStepGraph, OnIsRefusedInOneLineOnACpu) {
  EXPECT_NO_THROW(check_cuda_graphs(with_graphs("auto"), torch::kCPU));
  EXPECT_NO_THROW(check_cuda_graphs(with_graphs("off"), torch::kCPU));
  try {
    check_cuda_graphs(with_graphs("on"), torch::kCPU);
    FAIL() << "on was taken on a CPU";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("configs/run.yaml: runtime.cuda_graphs: on needs a GPU", 0), 0u) << message;
  }
}

TEST(CudaStepGraph, OnIsRefusedOnAGpuWhenTheBuildHasNoGraphs) {
  if (CudaStepGraph::built()) GTEST_SKIP() << "this build captures CUDA graphs";
  EXPECT_THROW(check_cuda_graphs(with_graphs("on"), torch::Device(torch::kCUDA, 0)), InputError);
}

}  // namespace
}  // namespace cellgan
