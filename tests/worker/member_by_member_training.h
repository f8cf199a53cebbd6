// The reference of lockstep training (worker/lockstep_training.h): steps 4
// and 5 of one cell's generation taken one member at a time, each selected
// copy with its own modules and LibTorch's Adam, as a cell trained before
// its networks were stacked. tests/worker/lockstep_training_test.cpp holds
// the lockstep to it.
//
// train_member_by_member(): what train_in_lockstep() does for one cell
// (its steps, draws and marks, lockstep_training.h), but seeds Torch's
// global generator from work.global_seed first and draws dropout and
// WGAN-GP's shares from it (so the bits differ from the lockstep's where
// those draw), and under bf16 or fp16 takes its penalties' passes inside
// autocast, where the lockstep takes WGAN-GP's critic pass on interpolates
// in fp32 (compare the two in fp32). Returns
// the seconds spent mutating.
//
// Thread-safety: callers hold lock_torch_generator() where ranks are
// threads.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "common/config.h"
#include "common/nn/device.h"
#include "common/nn/discriminator_step.h"
#include "common/nn/losses.h"
#include "common/nn/precision.h"
#include "common/nn/training_data.h"
#include "common/step_schedule.h"
#include "worker/generation_steps.h"

namespace cellgan::worker_test {

// What train_member_by_member() watches of one copy's losses, kept on the
// device so that no step waits for it; read_watches() reads them all once,
// after the last batch.
struct LossWatch {
  torch::Tensor lost;  // a loss was non-finite
  torch::Tensor sum;   // the losses' sum, when summing
  std::int64_t steps = 0;

  void note(const torch::Tensor& loss, bool summing) {
    const torch::Tensor value = loss.detach();
    const torch::Tensor bad = torch::isfinite(value).logical_not();
    lost = lost.defined() ? lost.logical_or(bad) : bad;
    if (summing) sum = sum.defined() ? sum + value : value;
    ++steps;
  }
};

// `diverged[i]`: copy i met a non-finite loss; with `summing`, `means[i]`
// its mean loss (NaN when it never stepped), else `means` is left empty.
inline void read_watches(const std::vector<LossWatch>& watches, bool summing, std::vector<bool>& diverged,
                         std::vector<double>& means) {
  std::vector<torch::Tensor> values;
  for (const LossWatch& w : watches) {
    if (w.steps == 0) continue;
    values.push_back(w.lost.to(torch::kFloat64));
    if (summing) values.push_back(w.sum.to(torch::kFloat64) / static_cast<double>(w.steps));
  }
  const std::vector<double> read = host_values(values);
  diverged.assign(watches.size(), false);
  means.assign(summing ? watches.size() : 0, std::numeric_limits<double>::quiet_NaN());
  std::size_t at = 0;
  for (std::size_t i = 0; i < watches.size(); ++i) {
    if (watches[i].steps == 0) continue;
    diverged[i] = read[at++] != 0.0;
    if (summing) means[i] = read[at++];
  }
}

inline double train_member_by_member(const TrainingConfig& training, const TrainingData& data, std::int64_t batches,
                                     std::int64_t latent_dim, int cell, GenerationWorkingSet& work) {
  std::vector<Individual>& gens = work.selected_generators;
  std::vector<Individual>& discs = work.selected_discriminators;
  // Selection's copies share the pool's tensors (Individual::snapshot); this
  // reference steps its copies in place, so it makes them its own first.
  for (std::vector<Individual>* copies : {&gens, &discs})
    for (Individual& copy : *copies) copy = copy.clone();
  SplitMix64& rng = work.rng;
  double mutating = 0.0;
  const auto mutate = [&](Individual& individual) {
    const auto started = std::chrono::steady_clock::now();
    mutate_learning_rate(training, individual, rng);
    mutating += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const DiscriminatorPenalties penalties = discriminator_penalties(training);
  const std::int64_t n = data.size();
  torch::manual_seed(work.global_seed);
  const torch::Tensor order = to_device_without_waiting(torch::randperm(n, work.generator, torch::kLong), data.device());
  const at::Generator latents = latent_generator(work, data.device());
  const auto latent = [&](std::int64_t rows) {
    return torch::randn({rows, latent_dim}, latents, torch::TensorOptions().dtype(torch::kFloat32).device(data.device()));
  };
  std::vector<LossWatch> g_watch(gens.size()), d_watch(discs.size());
  const bool summing = copies_score_decides_nothing(training);
  for (std::int64_t b = 0; b < batches; ++b) {
    if (work.batch_delay.count() > 0) std::this_thread::sleep_for(work.batch_delay);
    const std::int64_t start = (b * training.batch_size) % std::max<std::int64_t>(1, n - training.batch_size + 1);
    const torch::Tensor real = data.rows(order.narrow(0, start, std::min(training.batch_size, n)));
    const std::int64_t bs = real.size(0);
    const bool generators_step = generator_steps_on(training, b);
    for (std::size_t i = 0; generators_step && i < gens.size(); ++i) {
      Individual& g = gens[i];
      mutate(g);
      Individual& d = discs[rng.below(discs.size())];
      g.optimizer().zero_grad();
      torch::Tensor d_fake;
      {
        const AutocastScope autocast(training.precision, data.device());
        d_fake = d.discriminator()->forward(g.generator()->forward(latent(bs)));
      }
      const torch::Tensor loss = generator_loss(g.loss, d_fake, training.bce);
      loss.backward();
      g.optimizer().step();
      g_watch[i].note(loss, summing);
    }
    if (!discriminator_steps_on(training, b)) continue;
    for (std::size_t j = 0; j < discs.size(); ++j) {
      Individual& d = discs[j];
      mutate(d);
      Individual& g = gens[rng.below(gens.size())];
      d.optimizer().zero_grad();
      torch::Tensor loss;
      {
        const AutocastScope autocast(training.precision, data.device());
        torch::Tensor fake;
        {
          torch::NoGradGuard no_grad;
          fake = g.generator()->forward(latent(bs)).to(torch::kFloat);  // itself in fp32
        }
        loss = discriminator_step_loss(d.discriminator(), discriminator_loss_for(g.loss), real, fake, penalties);
      }
      loss.backward();
      d.optimizer().step();
      d_watch[j].note(loss, summing);
    }
  }
  read_watches(g_watch, summing, work.diverged_generators, work.training_generator_losses);
  read_watches(d_watch, summing, work.diverged_discriminators, work.training_discriminator_losses);
  for (std::vector<Individual>* trained : {&gens, &discs}) {
    for (Individual& individual : *trained) {
      individual.source_cell = cell;
      individual.release_gradients();  // not state; the next step recreates them
    }
  }
  return mutating;
}

}  // namespace cellgan::worker_test
