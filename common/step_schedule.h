// Which networks take an optimiser step on a batch of training: the one
// rule of training.discriminator_skip and training.n_critic, shared by the
// layouts' trainers.
//
// - bce, mse, heuristic, mustangs: the generators step on every batch; the
//   discriminators on every (discriminator_skip + 1)-th, the first included
//   (batch 0, skip + 1, ...).
// - wgan_gp: the critics step on every batch (each step on a batch of its
//   own, as in Gulrajani et al.); the generators on every n_critic-th, the
//   first included, so there are n_critic critic steps per generator step
//   and a generator steps even when a generation has fewer batches.
//
// `batch` counts from 0 within the caller's loop.
//
// And which generations score their samples where the score decides
// nothing (data_parallel, per_class): every evaluation.preview_every-th
// (0 = none) and the last; the previews are of the same generations, but
// for preview_every 0, which writes none.
// Thread-safety: pure.
#pragma once

#include <cstdint>

#include "common/config.h"

namespace cellgan {

inline bool generator_steps_on(const TrainingConfig& training, std::int64_t batch) {
  if (training.loss != LossKind::kWganGp) return true;
  return batch % training.n_critic == 0;
}

inline bool discriminator_steps_on(const TrainingConfig& training, std::int64_t batch) {
  if (training.loss == LossKind::kWganGp) return true;
  return batch % (training.discriminator_skip + 1) == 0;
}

// `generation` counts from 1.
inline bool preview_generation(const Config& config, std::int64_t generation) {
  const std::int64_t every = config.evaluation.preview_every;
  return (every > 0 && generation % every == 0) || generation == config.training.generations;
}

}  // namespace cellgan
