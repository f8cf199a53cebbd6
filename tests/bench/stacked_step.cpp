// bench_stacked_step: one MLP training step (a discriminator step, then a
// generator step; batch 100, the mnist shapes G 64-256-256-784 and
// D 784-256-256-1, BCE in PyTorch's form, Adam) of P members, stacked
// (common/nn/stacked_networks.h, one batched kernel per layer) against P
// individuals stepped one after another, for P in {1, 4, 16}.
//
// Usage: bench_stacked_step [--device cpu|cuda] [--steps N] [--threads T]
// Prints one row per P: milliseconds per step of all P members both ways
// and the ratio, after two warm-up steps; N timed steps (default 20), T
// Torch threads (default 1). Builds against LibTorch 1.13 and 2.x.
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/nn/individual.h"
#include "common/nn/losses.h"
#include "common/nn/stacked_losses.h"
#include "common/nn/stacked_networks.h"

namespace {

using namespace cellgan;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kBatch = 100;
constexpr double kLearningRate = 2e-4;

struct Inputs {
  torch::Tensor real;    // [P, B, 784]
  torch::Tensor z_fake;  // [P, B, 64]
  torch::Tensor z_step;  // [P, B, 64]
};

void step_alone(Individual& g, Individual& d, const Inputs& in, std::int64_t p) {
  torch::Tensor fake;
  {
    torch::NoGradGuard no_grad;
    fake = g.generator()->forward(in.z_fake[p]);
  }
  d.optimizer().zero_grad();
  discriminator_loss(LossKind::kBce, d.discriminator()->forward(in.real[p]), d.discriminator()->forward(fake),
                     BceForm::kPyTorch)
      .backward();
  d.optimizer().step();
  g.optimizer().zero_grad();
  generator_loss(LossKind::kBce, d.discriminator()->forward(g.generator()->forward(in.z_step[p])), BceForm::kPyTorch)
      .backward();
  g.optimizer().step();
}

void step_stacked(StackedGenerator& g, StackedDiscriminator& d, const Inputs& in) {
  torch::Tensor fake;
  {
    torch::NoGradGuard no_grad;
    fake = g.forward(in.z_fake);
  }
  d.optimizer().zero_grad();
  stacked_discriminator_loss(LossKind::kBce, d.forward(in.real), d.forward(fake), BceForm::kPyTorch).total.backward();
  d.optimizer().step();
  g.optimizer().zero_grad();
  stacked_generator_loss(LossKind::kBce, d.forward(g.forward(in.z_step)), BceForm::kPyTorch).total.backward();
  g.optimizer().step();
}

// Seconds per call of `step`, after two warm-up calls.
template <typename Step>
double seconds_per_step(const torch::Device& device, int steps, Step step) {
  const auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  for (int s = 0; s < 2; ++s) step();
  sync();
  const auto began = Clock::now();
  for (int s = 0; s < steps; ++s) step();
  sync();
  return std::chrono::duration<double>(Clock::now() - began).count() / steps;
}

int run(int argc, char** argv) {
  std::string device_name = "cpu";
  int steps = 20;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) {
      device_name = argv[++i];
    } else if (a == "--steps" && i + 1 < argc) {
      steps = std::stoi(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::stoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_stacked_step [--device cpu|cuda] [--steps N] [--threads T]\n");
      return 2;
    }
  }
  if ((device_name != "cpu" && device_name != "cuda") || steps < 1 || threads < 1) {
    std::fprintf(stderr, "bench_stacked_step: expected --device cpu or cuda, --steps >= 1, --threads >= 1\n");
    return 2;
  }
  if (device_name == "cuda" && !torch::cuda::is_available()) {
    std::fprintf(stderr, "bench_stacked_step: --device cuda: LibTorch sees no CUDA device\n");
    return 1;
  }
  const torch::Device device(device_name == "cuda" ? torch::kCUDA : torch::kCPU);
  torch::set_num_threads(threads);
  const NetworkShape shape;  // mnist mlp: latent 64, data 784
  std::printf("one MLP step (D then G), batch %lld, %s, %d Torch thread(s), %d timed steps\n\n",
              static_cast<long long>(kBatch), device_name.c_str(), threads, steps);
  std::printf("| P | individuals, ms/step | stacked, ms/step | individuals / stacked |\n");
  std::printf("| ---: | ---: | ---: | ---: |\n");
  for (const std::int64_t members : {1, 4, 16}) {
    torch::manual_seed(1);
    std::vector<Individual> gens, discs;
    StackedGenerator g_stack(shape, members, kLearningRate, {}, LossKind::kBce, device);
    StackedDiscriminator d_stack(shape, members, kLearningRate, {}, LossKind::kBce, device);
    for (std::int64_t p = 0; p < members; ++p) {
      gens.emplace_back(Role::kGenerator, shape, kLearningRate, AdamSettings{}, LossKind::kBce, device);
      discs.emplace_back(Role::kDiscriminator, shape, kLearningRate, AdamSettings{}, LossKind::kBce, device);
      g_stack.load_row(p, gens.back());
      d_stack.load_row(p, discs.back());
    }
    const auto on = torch::TensorOptions().device(device);
    const Inputs in{torch::rand({members, kBatch, shape.data_dim}, on) * 2 - 1,
                    torch::randn({members, kBatch, shape.latent_dim}, on),
                    torch::randn({members, kBatch, shape.latent_dim}, on)};
    const double alone = seconds_per_step(device, steps, [&] {
      for (std::int64_t p = 0; p < members; ++p) step_alone(gens[p], discs[p], in, p);
    });
    const double stacked = seconds_per_step(device, steps, [&] { step_stacked(g_stack, d_stack, in); });
    std::printf("| %lld | %.2f | %.2f | %.2fx |\n", static_cast<long long>(members), alone * 1e3, stacked * 1e3,
                alone / stacked);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_stacked_step: %s\n", e.what());
    return 1;
  }
}
