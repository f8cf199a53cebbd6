// A toy cell for the worker's unit tests: a 3x3 ring configuration, its
// data, scorer and trainer, and the encoded centres of the four other cells
// of a von Neumann neighbourhood.
//
// Thread-safety: one Fixture per test.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/nn/scores.h"
#include "common/nn/training_data.h"
#include "worker/cell_trainer.h"

namespace cellgan::worker_test {

inline Config toy_config() {
  Config c = parse_config(R"(
seed: 11
data: {dataset: ring, toy_samples: 1000}
network: {kind: toy, latent_dim: 4, toy_hidden: 16}
grid: {rows: 3, cols: 3}
training: {generations: 2, batches_per_generation: 5, batch_size: 50, fitness_samples: 100, score_samples: 100,
           learning_rate: 1.0e-3}
)",
                          "test");
  return c;
}

struct Fixture {
  explicit Fixture(Config c) : config(std::move(c)), data(config), scorer(make_scorer(config)),
        trainer(config, data, *scorer) {
    for (int cell : {1, 3, 5, 7}) {
      CellState s = trainer.initial_state(cell, 4);
      centres.push_back({s.generators[0].encode(), s.discriminators[0].encode(), cell});
    }
  }
  Config config;
  TrainingData data;
  std::unique_ptr<SampleScorer> scorer;
  CellTrainer trainer;
  struct Centre {
    std::vector<std::uint8_t> generator, discriminator;
    int cell = -1;
  };
  // Centres of 4 other cells, as a 3x3 von Neumann neighbourhood has.
  std::vector<Centre> centres;

  std::vector<NeighbourCentre> neighbours() const {
    std::vector<NeighbourCentre> out;
    for (const Centre& c : centres) {
      out.push_back({&c.generator, &c.discriminator});
      out.back().cell = c.cell;
    }
    return out;
  }
};

}  // namespace cellgan::worker_test
