// bench_bare_pair: the reference of benchmark D1 (tests/bench/README.md).
//
// One G/D pair trained in a plain LibTorch loop, one process, no MPI, no
// threads: the tensor work of one data-parallel replica with W = 1
// (worker/replica_trainer.h) — per step accumulate_steps micro-batches of
// training.batch_size rows, a generator Adam step, and on every
// (discriminator_skip + 1)-th step a discriminator Adam step on the real
// rows (index_select of an epoch's shuffle) and a fake batch — with the
// same networks, losses (common/nn) and batch. No all-reduce, no buffer
// averaging, no scoring.
//
// Usage: bench_bare_pair CONFIG [--generations N]
// A generation is batches_per_generation steps (0 = an epoch). Prints one
// line per generation and, last, the line d_report.py reads:
//   images per second after warm-up: X   (generations 2-G; rows of the batches trained per second)
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "common/config.h"
#include "common/math_kernels.h"
#include "common/nn/discriminator_step.h"
#include "common/nn/losses.h"
#include "common/nn/networks.h"
#include "common/nn/training_data.h"
#include "common/rng.h"

namespace {

using namespace cellgan;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int run(int argc, char** argv) {
  std::string config_path;
  std::int64_t generations = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--generations" && i + 1 < argc) {
      generations = std::stoll(argv[++i]);
    } else if (config_path.empty() && a.rfind("--", 0) != 0) {
      config_path = a;
    } else {
      std::fprintf(stderr, "usage: bench_bare_pair CONFIG [--generations N]\n");
      return 2;
    }
  }
  if (config_path.empty()) {
    std::fprintf(stderr, "usage: bench_bare_pair CONFIG [--generations N]\n");
    return 2;
  }
  const Config config = load_config(config_path);
  const TrainingConfig& t = config.training;
  if (generations < 0) generations = t.generations;
  if (generations < 2) {
    std::fprintf(stderr, "bench_bare_pair: --generations: expected >= 2 (the first is warm-up)\n");
    return 2;
  }
  torch::set_num_threads(1);
  torch::manual_seed(config.seed);
  const TrainingData data(config);
  const NetworkShape shape = network_shape(config);
  Generator g(shape);
  Discriminator d(shape);
  const auto adam = [&](torch::nn::Module& m) {
    return torch::optim::Adam(m.parameters(),
                              torch::optim::AdamOptions(t.learning_rate).betas({t.adam_beta1, t.adam_beta2}));
  };
  torch::optim::Adam g_adam = adam(*g);
  torch::optim::Adam d_adam = adam(*d);
  const LossKind g_loss = t.loss;
  const LossKind d_loss = discriminator_loss_for(g_loss);
  const std::int64_t rows = std::min(t.batch_size, data.size());
  const std::int64_t k = config.data_parallel.accumulate_steps;
  const std::int64_t per_epoch = std::max<std::int64_t>(1, data.size() / rows);
  const std::int64_t steps = t.batches_per_generation > 0 ? t.batches_per_generation
                                                          : std::max<std::int64_t>(1, data.size() / (rows * k));
  std::printf("bare pair: %s, %s networks, batch %lld x %lld accumulated, %lld steps per generation, %lld "
              "generations, 1 Torch thread, %s kernels\n",
              config_path.c_str(), to_string(config.network.kind), static_cast<long long>(rows),
              static_cast<long long>(k), static_cast<long long>(steps), static_cast<long long>(generations),
              blas_kernels().c_str());
  std::fflush(stdout);

  torch::Tensor order;
  std::int64_t order_epoch = -1;
  double timed_seconds = 0.0;
  std::int64_t timed_rows = 0;
  for (std::int64_t gen = 0; gen < generations; ++gen) {
    const auto began = Clock::now();
    for (std::int64_t s = 0; s < steps; ++s) {
      const std::int64_t step = gen * steps + s;
      g_adam.zero_grad();
      for (std::int64_t m = 0; m < k; ++m) {
        const torch::Tensor l = generator_loss(g_loss, d->forward(g->forward(torch::randn({rows, shape.latent_dim}))), t.bce) /
                                static_cast<double>(k);
        l.backward();
        (void)l.item<double>();
      }
      g_adam.step();
      if (step % (t.discriminator_skip + 1) != 0) continue;
      d_adam.zero_grad();
      for (std::int64_t m = 0; m < k; ++m) {
        const std::int64_t micro = step * k + m;
        if (micro / per_epoch != order_epoch) {
          order_epoch = micro / per_epoch;
          order = torch::randperm(data.size(), torch::kLong);
        }
        const torch::Tensor real = data.rows(order.narrow(0, (micro % per_epoch) * rows, rows));
        torch::Tensor fake;
        {
          torch::NoGradGuard no_grad;
          fake = g->forward(torch::randn({rows, shape.latent_dim}));
        }
        const torch::Tensor l = discriminator_step_loss(d, d_loss, real, fake, discriminator_penalties(t)) / static_cast<double>(k);
        l.backward();
        (void)l.item<double>();
      }
      d_adam.step();
    }
    const double seconds = seconds_since(began);
    std::printf("generation %lld: %.3f s, %.1f images/s\n", static_cast<long long>(gen + 1), seconds,
                static_cast<double>(steps * rows * k) / seconds);
    std::fflush(stdout);
    if (gen == 0) continue;  // warm-up
    timed_seconds += seconds;
    timed_rows += steps * rows * k;
  }
  std::printf("images per second after warm-up: %.2f\n", static_cast<double>(timed_rows) / timed_seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bare_pair: %s\n", e.what());
    return 1;
  }
}
