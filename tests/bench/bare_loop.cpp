// bench_bare_loop: the reference of benchmark B1 (tests/bench/README.md).
//
// For each generation and each of the R*C cells it does the tensor work of
// CellTrainer::run_generation (worker/cell_trainer.cpp) for that cell's
// neighbourhood, in one process, with plain Generator/Discriminator modules
// and torch::optim::Adam: no MPI, no threads, no encode/decode, no
// selection bookkeeping. With P = population_size and N = the cell's
// neighbourhood size (self included), each cell per generation does:
//
//   fitness   n_G = P + N-1 generators, n_D = P + N-1 discriminators:
//             n_D D forwards on fitness_samples real samples, n_G G forwards
//             on fitness_samples latents, n_G*n_D D forwards on the fakes,
//             a generator and a discriminator loss (.item()) per pair
//   train     batches_per_generation batches (0 = one epoch); per batch P
//             G Adam steps (G -> D -> generator loss -> backward -> step),
//             and P D Adam steps, on the batches common/step_schedule.h
//             says (for bce: G every batch, D every (discriminator_skip+1)-th)
//             (G forward without grad, D on real and fake, loss, backward,
//             step); the same batch size and index_select of the batch
//   rescore   the P trained Gs against the n_D Ds, and the n_G Gs against
//             the P trained Ds (the replacement's forwards); left out, as
//             cellgan leaves it out, when P = 1 and replacement is always
//             (and the fitness game too when n_G = n_D = 1)
//   mixture   one sample of score_samples from the P + N-1 mixture
//             generators (uniform weights, a seeded torch::Generator) and its
//             scorer.report: cellgan scores both weight vectors on shared
//             draws, about one sample's work
//
// The cell's "local" P individuals are trained in place (cellgan trains
// copies chosen by tournament); the neighbours are the first individuals of
// the neighbouring cells' populations. The work has the same sizes either
// way; the results are not cellgan's and are not meant to be.
//
// Usage: bench_bare_loop CONFIG [--generations N]
// Prints per-generation wall times and, last, the summary lines that
// b_report.py reads:
//   total seconds: T
//   seconds per generation per cell: X (generations 1-G)
//   seconds per generation per cell after warm-up: Y (generations 2-G)
//   peak RSS: M MB
//   RSS at start: S MB   (before any tensor: what linking LibTorch costs)
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/math_kernels.h"
#include "common/process_stats.h"
#include "common/rng.h"
#include "common/step_schedule.h"
#include "common/nn/discriminator_step.h"
#include "common/nn/losses.h"
#include "common/nn/networks.h"
#include "common/nn/scores.h"
#include "common/nn/training_data.h"
#include "grid/topology.h"

namespace {

using namespace cellgan;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Player {
  Generator g{nullptr};
  Discriminator d{nullptr};
  std::unique_ptr<torch::optim::Adam> g_adam;
  std::unique_ptr<torch::optim::Adam> d_adam;
  LossKind loss = LossKind::kBce;  // the G's loss; its D uses discriminator_loss_for(loss)
};

struct Cell {
  std::vector<Player> local;  // population_size players
  std::vector<int> neighbours;  // other cells of the neighbourhood, in order
};

// Every G against every D on one real batch and one latent batch; the
// losses are read back as doubles, as the fitness is.
void evaluate(std::vector<Generator>& gens, const std::vector<LossKind>& g_loss,
              std::vector<Discriminator>& discs, const torch::Tensor& real, const torch::Tensor& z, BceForm bce) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> d_real;
  for (Discriminator& d : discs) {
    d->eval();
    d_real.push_back(d->forward(real));
  }
  for (std::size_t i = 0; i < gens.size(); ++i) {
    gens[i]->eval();
    const torch::Tensor fake = gens[i]->forward(z);
    for (std::size_t j = 0; j < discs.size(); ++j) {
      const torch::Tensor d_fake = discs[j]->forward(fake);
      (void)generator_loss(g_loss[i], d_fake, bce).item<double>();
      (void)discriminator_loss(discriminator_loss_for(g_loss[i]), d_real[j], d_fake, bce).item<double>();
    }
  }
  for (Generator& g : gens) g->train();
  for (Discriminator& d : discs) d->train();
}

// n samples from the generators, split as evenly as uniform weights split them.
torch::Tensor sample_uniform_mixture(std::vector<Generator>& gens, std::int64_t n, std::int64_t latent,
                                     torch::Generator& gen) {
  torch::NoGradGuard no_grad;
  const auto k = static_cast<std::int64_t>(gens.size());
  std::vector<torch::Tensor> parts;
  for (std::int64_t i = 0; i < k; ++i) {
    const std::int64_t count = n / k + (i < n % k ? 1 : 0);
    if (count == 0) continue;
    gens[i]->eval();
    parts.push_back(gens[i]->forward(torch::randn({count, latent}, gen)));
    gens[i]->train();
  }
  return torch::cat(parts, 0);
}

int run(int argc, char** argv) {
  const double start_rss_mb = static_cast<double>(peak_rss_bytes()) / 1e6;
  std::string config_path;
  std::int64_t generations = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--generations" && i + 1 < argc) {
      generations = std::stoll(argv[++i]);
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: bench_bare_loop CONFIG [--generations N]\n");
      return 0;
    } else if (config_path.empty() && a.rfind("--", 0) != 0) {
      config_path = a;
    } else {
      std::fprintf(stderr, "bench_bare_loop: unexpected argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (config_path.empty()) {
    std::fprintf(stderr, "usage: bench_bare_loop CONFIG [--generations N]\n");
    return 2;
  }
  const Config config = load_config(config_path);
  const TrainingConfig& t = config.training;
  if (generations < 0) generations = t.generations;
  if (generations < 1) {
    std::fprintf(stderr, "bench_bare_loop: --generations: expected >= 1\n");
    return 2;
  }
  torch::set_num_threads(1);
  torch::manual_seed(config.seed);
  SplitMix64 rng(derive_seed(config.seed, Stream::kCellTraining, 0xBE7C4));

  const TrainingData data(config);
  std::unique_ptr<SampleScorer> scorer = make_scorer(config);
  const std::string objective = objective_name(config);
  double objective_sum = 0.0;  // printed, so that the scoring is not optimised away
  const NetworkShape shape = network_shape(config);
  const std::int64_t n = data.size();
  const std::int64_t latent = shape.latent_dim;
  const std::int64_t epoch = std::max<std::int64_t>(1, n / t.batch_size);
  const std::int64_t batches = t.batches_per_generation > 0 ? t.batches_per_generation : epoch;

  const GridShape grid(static_cast<int>(config.grid.rows), static_cast<int>(config.grid.cols));
  const auto adam = [&](torch::nn::Module& m) {
    return std::make_unique<torch::optim::Adam>(
        m.parameters(), torch::optim::AdamOptions(t.learning_rate).betas({t.adam_beta1, t.adam_beta2}));
  };
  std::vector<Cell> cells(static_cast<std::size_t>(grid.cell_count()));
  std::string hood_sizes;
  for (int c = 0; c < grid.cell_count(); ++c) {
    Cell& cell = cells[static_cast<std::size_t>(c)];
    const auto hood = neighbourhood(grid, c, config.grid.neighbourhood);
    cell.neighbours.assign(hood.begin() + 1, hood.end());
    hood_sizes += (c ? "," : "") + std::to_string(hood.size());
    for (std::int64_t i = 0; i < t.population_size; ++i) {
      Player p;
      p.g = Generator(shape);
      p.d = Discriminator(shape);
      p.g_adam = adam(*p.g);
      p.d_adam = adam(*p.d);
      p.loss = t.loss == LossKind::kMustangs ? draw_mustangs_loss(rng) : t.loss;
      cell.local.push_back(std::move(p));
    }
  }
  std::printf("bare loop: %s, %dx%d grid, %d cells, neighbourhood sizes %s, population %lld, "
              "%lld batches of %lld per generation, %lld generations, 1 Torch thread, %s kernels\n",
              config_path.c_str(), grid.rows(), grid.cols(), grid.cell_count(), hood_sizes.c_str(),
              static_cast<long long>(t.population_size), static_cast<long long>(batches),
              static_cast<long long>(t.batch_size), static_cast<long long>(generations), blas_kernels().c_str());
  std::fflush(stdout);

  std::vector<double> generation_seconds;
  for (std::int64_t gen_index = 0; gen_index < generations; ++gen_index) {
    const auto t_gen = Clock::now();
    for (Cell& cell : cells) {
      if (t.loss == LossKind::kMustangs)
        for (Player& p : cell.local) p.loss = draw_mustangs_loss(rng);

      // The neighbourhood: local players, then the neighbours' first players.
      std::vector<Generator> hood_g, local_g;
      std::vector<Discriminator> hood_d, local_d;
      std::vector<LossKind> hood_loss, local_loss;
      for (Player& p : cell.local) {
        hood_g.push_back(p.g);
        hood_d.push_back(p.d);
        hood_loss.push_back(p.loss);
        local_g.push_back(p.g);
        local_d.push_back(p.d);
        local_loss.push_back(p.loss);
      }
      for (int other : cell.neighbours) {
        Player& p = cells[static_cast<std::size_t>(other)].local.front();
        hood_g.push_back(p.g);
        hood_d.push_back(p.d);
        hood_loss.push_back(p.loss);
      }

      // Fitness.
      const torch::Tensor fit_index = torch::randint(n, {t.fitness_samples}, torch::kLong);
      const torch::Tensor real_fit = data.rows(fit_index);
      const torch::Tensor z_fit = torch::randn({t.fitness_samples, latent});
      const bool always = t.replacement == ReplacementRule::kAlways;
      if (!(always && hood_g.size() == 1 && hood_d.size() == 1)) evaluate(hood_g, hood_loss, hood_d, real_fit, z_fit, t.bce);

      // Training.
      const torch::Tensor order = torch::randperm(n, torch::kLong);
      const auto pop = static_cast<std::uint64_t>(cell.local.size());
      for (std::int64_t b = 0; b < batches; ++b) {
        const std::int64_t start = (b * t.batch_size) % std::max<std::int64_t>(1, n - t.batch_size + 1);
        const torch::Tensor real = data.rows(order.narrow(0, start, std::min(t.batch_size, n)));
        const std::int64_t bs = real.size(0);
        for (Player& p : cell.local) {
          if (!generator_steps_on(t, b)) break;
          Discriminator& d = cell.local[rng.below(pop)].d;
          p.g_adam->zero_grad();
          const torch::Tensor loss = generator_loss(p.loss, d->forward(p.g->forward(torch::randn({bs, latent}))), t.bce);
          loss.backward();
          p.g_adam->step();
        }
        if (!discriminator_steps_on(t, b)) continue;
        for (Player& p : cell.local) {
          Player& other = cell.local[rng.below(pop)];
          torch::Tensor fake;
          {
            torch::NoGradGuard no_grad;
            fake = other.g->forward(torch::randn({bs, latent}));
          }
          p.d_adam->zero_grad();
          const torch::Tensor loss =
              discriminator_step_loss(p.d, discriminator_loss_for(other.loss), real, fake, discriminator_penalties(t));
          loss.backward();
          p.d_adam->step();
        }
      }

      // Replacement's re-scoring: trained Gs against the neighbourhood's Ds,
      // the neighbourhood's Gs against the trained Ds.
      if (!(always && t.population_size == 1)) {
        evaluate(local_g, local_loss, hood_d, real_fit, z_fit, t.bce);
        evaluate(hood_g, hood_loss, local_d, real_fit, z_fit, t.bce);
      }

      // Mixture step: one sample, scored once (report), as cellgan's shared
      // draws cost about one.
      std::vector<Generator> mixture = local_g;
      for (int other : cell.neighbours) mixture.push_back(cells[static_cast<std::size_t>(other)].local.front().g);
      torch::Generator sampler = at::detail::createCPUGenerator(rng.next());
      const std::uint64_t sample_seed = rng.next();
      sampler.set_current_seed(sample_seed);
      const torch::Tensor current = sample_uniform_mixture(mixture, t.score_samples, latent, sampler);
      const auto current_scores = scorer->report(current);
      objective_sum += current_scores.at(objective);
    }
    generation_seconds.push_back(seconds_since(t_gen));
    std::printf("generation %lld/%lld: %.3f s (%.3f s per cell)\n", static_cast<long long>(gen_index + 1),
                static_cast<long long>(generations), generation_seconds.back(),
                generation_seconds.back() / static_cast<double>(cells.size()));
    std::fflush(stdout);
  }

  double total = 0.0;
  for (double s : generation_seconds) total += s;
  const auto cell_count = static_cast<double>(cells.size());
  std::printf("total seconds: %.3f\n", total);
  std::printf("seconds per generation per cell: %.4f (generations 1-%lld)\n",
              total / (static_cast<double>(generations) * cell_count), static_cast<long long>(generations));
  if (generations > 1) {
    std::printf("seconds per generation per cell after warm-up: %.4f (generations 2-%lld)\n",
                (total - generation_seconds.front()) / (static_cast<double>(generations - 1) * cell_count),
                static_cast<long long>(generations));
  } else {
    std::printf("seconds per generation per cell after warm-up: n/a (needs 2 or more generations)\n");
  }
  std::printf("mean mixture objective: %.4f\n", objective_sum / static_cast<double>(generations * cells.size()));
  std::printf("peak RSS: %.1f MB\n", static_cast<double>(peak_rss_bytes()) / 1e6);
  std::printf("RSS at start: %.1f MB\n", start_rss_mb);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bare_loop: %s\n", e.what());
    return 1;
  }
}
