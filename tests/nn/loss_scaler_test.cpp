// The fp16 loss scale (loss_scaler.h) and autocast (precision.h) on the CPU:
// a step whose scaled gradients overflow is skipped — Adam does not move
// the weights — the scale halves and the next step goes on; the scale
// doubles after its interval of finite steps; unscaling by a power of two
// is exact; bf16 autocast runs matrix products in bf16 and losses in
// float32, and is switched off again at the end of its scope; fp16 is
// refused on a CPU in one line and taken on a GPU for every network kind.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>

#include "common/error.h"
#include "common/nn/batched_adam.h"
#include "common/nn/loss_scaler.h"
#include "common/nn/losses.h"
#include "common/nn/precision.h"
#include "common/nn/stacked_loss_scaler.h"

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

// Three stacked members, one of whose scaled loss overflows: only its Adam
// step is skipped and only its scale halves; the others' gradients are
// unscaled exactly (a power-of-two scale) and their rows step.
TEST(StackedLossScaler, AMembersOverflowSkipsItsStepOnlyAndHalvesItsScale) {
  torch::manual_seed(3);
  const torch::Tensor w = torch::randn({3, 4}).requires_grad_(true);
  BatchedAdam adam({w}, 1e-2);
  const double scale = std::ldexp(1.0, 100);
  StackedLossScaler scaler(3, torch::kCPU, scale);
  const torch::Tensor x = torch::tensor({1.0f, 1e10f, 1.0f}).view({3, 1});
  const auto per_member = [&] { return (w * x).square().sum(1); };
  const torch::Tensor plain = torch::autograd::grad({per_member().sum()}, {w})[0];
  const torch::Tensor before = w.detach().clone();
  scaler.scaled(per_member()).backward();
  const torch::Tensor finite = scaler.unscale({w.grad()});
  EXPECT_TRUE(torch::equal(finite, torch::tensor({true, false, true})));
  for (std::int64_t p : {0, 2}) EXPECT_TRUE(torch::equal(w.grad()[p], plain[p])) << "member " << p;
  scaler.update(finite);
  adam.step(finite);
  EXPECT_TRUE(torch::equal(w.detach()[1], before[1])) << "the overflowing member stepped";
  for (std::int64_t p : {0, 2}) EXPECT_FALSE(torch::equal(w.detach()[p], before[p])) << "member " << p;
  EXPECT_EQ(scaler.skipped(), (std::vector<std::int64_t>{0, 1, 0}));
}

TEST(Precision, Bf16AutocastRunsProductsInBf16AndLossesInFloat32ThenSwitchesOff) {
  const torch::Tensor x = torch::randn({4, 8});
  const torch::Tensor w = torch::randn({3, 8});
  torch::Tensor y;
  {
    const AutocastScope autocast(Precision::kBf16, torch::kCPU);
    y = torch::sigmoid(torch::nn::functional::linear(x, w));
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
    EXPECT_EQ(autocast_type(torch::kCPU), torch::kBFloat16);
    const torch::Tensor loss = generator_loss(LossKind::kBce, y, BceForm::kPyTorch);
    EXPECT_EQ(loss.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(std::isfinite(loss.item<double>()));
  }
  EXPECT_FALSE(autocast_type(torch::kCPU).has_value());
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

// fp16 on a GPU is taken for every network kind, each of which trains as
// stacked members with a scale of their own (dcgan_conditional's stacked
// step under that scale: tests/nn/stacked_conditional_test.cpp).
TEST(Precision, Fp16IsRefusedOnACpuInOneLineAndTakenOnAGpuForEveryKind) {
  Config config = parse_config("training: {precision: bf16}\n", "run.yaml");
  EXPECT_EQ(refusal(config, torch::kCPU), "");
  config.training.precision = Precision::kFp16;
  const std::string cpu = refusal(config, torch::kCPU);
  EXPECT_EQ(cpu.rfind("run.yaml: training.precision: fp16 needs a GPU", 0), 0u) << cpu;
  EXPECT_EQ(cpu.find('\n'), std::string::npos);
  const torch::Device gpu(torch::kCUDA, 0);  // only named: nothing runs on it
  for (const NetworkKind kind : {NetworkKind::kMlp, NetworkKind::kToy, NetworkKind::kDcgan, NetworkKind::kSngan,
                                 NetworkKind::kDcganConditional}) {
    config.network.kind = kind;
    EXPECT_EQ(refusal(config, gpu), "") << to_string(kind);
  }
  config.network.kind = NetworkKind::kDcgan;
  config.layout = LayoutKind::kDataParallel;
  EXPECT_EQ(refusal(config, gpu), "");
}

}  // namespace
}  // namespace cellgan
