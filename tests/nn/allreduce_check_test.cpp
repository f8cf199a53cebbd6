// common/nn/allreduce_check.h: `allreduce: nccl` is refused in one line
// naming the key where this build has no NCCL, or the device is a CPU;
// the other all-reduces, and nccl outside data_parallel, pass.
#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "common/nn/allreduce_check.h"

namespace cellgan {
namespace {

Config data_parallel(AllreduceKind kind) {
  Config c;
  c.source = "configs/dp.yaml";
  c.layout = LayoutKind::kDataParallel;
  c.data_parallel.allreduce = kind;
  return c;
}

std::string refusal(const Config& c, const torch::Device& device) {
  try {
    check_allreduce(c, device);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(AllreduceCheck, NcclIsRefusedInOneLineWithoutNcclOrAGpu) {
  const std::string cpu = refusal(data_parallel(AllreduceKind::kNccl), torch::kCPU);
  ASSERT_FALSE(cpu.empty()) << "nccl on a CPU was accepted";
  EXPECT_EQ(cpu.find('\n'), std::string::npos) << cpu;
  EXPECT_EQ(cpu.rfind("configs/dp.yaml: data_parallel.allreduce: ", 0), 0u) << cpu;
  if (nccl_built())
    EXPECT_NE(cpu.find("nccl sums on GPUs and the device is cpu"), std::string::npos) << cpu;
  else
    EXPECT_NE(cpu.find("this cellgan was built without NCCL"), std::string::npos) << cpu;
}

TEST(AllreduceCheck, EveryOtherAllreduceRunsAnywhere) {
  for (AllreduceKind kind : {AllreduceKind::kRing, AllreduceKind::kReduceBroadcast, AllreduceKind::kMpi})
    EXPECT_EQ(refusal(data_parallel(kind), torch::kCPU), "") << to_string(kind);
  Config coevolution = data_parallel(AllreduceKind::kNccl);
  coevolution.layout = LayoutKind::kCoevolution;  // the key means nothing there
  EXPECT_EQ(refusal(coevolution, torch::kCPU), "");
}

}  // namespace
}  // namespace cellgan
