// The fp16 loss scale (loss_scaler.h) and autocast (precision.h) on the CPU:
// a step whose scaled gradients overflow is skipped — Adam does not move
// the weights — the scale halves and the next step goes on; the scale
// doubles after its interval of finite steps; unscaling by a power of two
// is exact; bf16 autocast runs matrix products in bf16 and losses in
// float32, and is switched off again at the end of its scope; fp16 is
// refused on a CPU in one line.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <ATen/autocast_mode.h>

#include <cmath>

#include "common/error.h"
#include "common/nn/loss_scaler.h"
#include "common/nn/losses.h"
#include "common/nn/precision.h"

namespace cellgan {
namespace {

TEST(LossScaler, AnOverflowingStepIsSkippedAndTheNextGoesOn) {
  torch::manual_seed(1);
  torch::nn::Linear net(4, 1);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-2));
  LossScaler scaler(/*initial=*/1e38, /*growth_interval=*/100);
  const torch::Tensor x = torch::randn({8, 4}) * 1e3;
  std::vector<torch::Tensor> grads;
  const torch::Tensor before = net->weight.detach().clone();
  // Gradients of about 1e6 times a scale of 1e38 overflow float32.
  adam.zero_grad();
  scaler.scale(net->forward(x).square().mean()).backward();
  for (const auto& p : net->parameters()) grads.push_back(p.grad());
  const bool finite = scaler.unscale(grads);
  scaler.update(finite);
  EXPECT_FALSE(finite);
  EXPECT_TRUE(torch::equal(net->weight, before)) << "a skipped step moved the weights";
  EXPECT_EQ(scaler.skipped(), 1);
  EXPECT_EQ(scaler.value(), 0.5e38);
  // Halving until the gradients fit, then a step that moves the weights.
  int skipped_more = 0;
  for (int i = 0; i < 200; ++i) {
    adam.zero_grad();
    scaler.scale(net->forward(x).square().mean()).backward();
    grads.clear();
    for (const auto& p : net->parameters()) grads.push_back(p.grad());
    const bool ok = scaler.unscale(grads);
    scaler.update(ok);
    if (ok) {
      adam.step();
      break;
    }
    ++skipped_more;
  }
  EXPECT_GT(skipped_more, 0);
  EXPECT_LT(skipped_more, 200) << "never recovered";
  EXPECT_FALSE(torch::equal(net->weight, before)) << "the step after the skips did not move the weights";
  EXPECT_TRUE(torch::isfinite(net->weight).all().item<bool>());
}

TEST(LossScaler, UnscalingByAPowerOfTwoIsExactAndTheScaleGrowsAfterItsInterval) {
  LossScaler scaler(/*initial=*/1024.0, /*growth_interval=*/3);
  const torch::Tensor g = torch::randn({100});
  torch::Tensor scaled = g * 1024.0;
  EXPECT_TRUE(scaler.unscale({scaled}));
  EXPECT_TRUE(torch::equal(scaled, g));
  scaler.update(true);
  scaler.update(true);
  EXPECT_EQ(scaler.value(), 1024.0);
  scaler.update(true);
  EXPECT_EQ(scaler.value(), 2048.0);
  scaler.update(false);
  EXPECT_EQ(scaler.value(), 1024.0);
  EXPECT_EQ(scaler.skipped(), 1);
}

TEST(Precision, Bf16AutocastRunsProductsInBf16AndLossesInFloat32ThenSwitchesOff) {
  const torch::Tensor x = torch::randn({4, 8});
  const torch::Tensor w = torch::randn({3, 8});
  torch::Tensor y;
  {
    const AutocastScope autocast(Precision::kBf16, torch::kCPU);
    y = torch::sigmoid(torch::nn::functional::linear(x, w));
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
    const torch::Tensor loss = generator_loss(LossKind::kBce, y, BceForm::kPyTorch);
    EXPECT_EQ(loss.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(std::isfinite(loss.item<double>()));
  }
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
  EXPECT_EQ(torch::nn::functional::linear(x, w).scalar_type(), torch::kFloat32);
  {
    const AutocastScope off(Precision::kFp32, torch::kCPU);
    EXPECT_EQ(torch::nn::functional::linear(x, w).scalar_type(), torch::kFloat32);
  }
}

std::string refusal(const Config& config, const torch::Device& device) {
  try {
    check_precision(config, device);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Precision, Fp16IsRefusedOnACpuAndOutsideDataParallelInOneLine) {
  Config config = parse_config("training: {precision: bf16}\n", "run.yaml");
  EXPECT_EQ(refusal(config, torch::kCPU), "");
  config.training.precision = Precision::kFp16;
  const std::string cpu = refusal(config, torch::kCPU);
  EXPECT_EQ(cpu.rfind("run.yaml: training.precision: fp16 needs a GPU", 0), 0u) << cpu;
  EXPECT_EQ(cpu.find('\n'), std::string::npos);
  const std::string grid = refusal(config, torch::Device(torch::kCUDA, 0));  // nothing runs on it
  EXPECT_NE(grid.find("layout coevolution does not keep yet"), std::string::npos) << grid;
  config.layout = LayoutKind::kDataParallel;
  EXPECT_EQ(refusal(config, torch::Device(torch::kCUDA, 0)), "");
}

}  // namespace
}  // namespace cellgan
