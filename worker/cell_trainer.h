// One generation of cellular coevolution in one cell (docs/architecture.md, "One generation of one cell"), with no
// communication: the caller hands in the neighbours' centre individuals
// (encoded, or live for cells of the same worker) and gets the cell's new
// state and a record of the generation.
//
// The steps, in order (functions of worker/generation_steps.h, and of
// lockstep_training.h for 4 and 5; the phase whose seconds it counts in
// brackets):
//  0. faults   the fault `nan` poisons the local generators; then every
//              non-finite local individual is replaced by a whole copy of
//              the first finite neighbour centre (docs/operations.md, "Faults: what is survived")    [gather]
//  1. gather   N_G = local generators + neighbour centres, N_D likewise.
//              Neighbours are read without their Adam state; one that
//              wins a tournament is read again, whole.           [gather]
//  2. fitness  every G against every D of the neighbourhood on
//              fitness_samples real and generated samples (lower is
//              better); not played when it decides nothing (one G and
//              one D in the pools, replacement always)           [evaluate]
//  3. select   tournament (tournament_size) population_size times on N_G
//              and on N_D; winners are copied (snapshots: tensors shared)
//              with Adam state and lr
//                                                                [select]
//  4. train    batches_per_generation batches (0 = one epoch); each G steps
//              against a random selected D; the Ds step every (skip+1)-th
//              batch against a random selected G                 [train]
//  5. mutate   before each step, with probability p:
//              lr <- max(0, lr + scale * N(-lr0/10, lr0)), written to Adam
//                                                                [mutate]
//  6. replace  trained copies are scored against the gathered
//              neighbourhood [evaluate] (when that decides nothing,
//              population 1 and replacement always, their fitness is their
//              mean loss in training instead); per replacement rule they replace
//              the worst local individuals (if_better: only when strictly
//              better) [replace]. Copies with non-finite weights or
//              fitness, or a non-finite loss in training, are discarded.
//  7. mixture  (1+1)-ES on the weights of the mixture (local generators +
//              neighbour centres): w' = normalise(clip(w + N(0, sigma), 0)),
//              kept when its objective is lower (objective_name(): FID for
//              images, mode TVD for toy data). On preview generations the
//              record keeps the first samples of the kept mixture's score
//              (GenerationRecord::preview); nothing extra is drawn.
//                                                                [evaluate]
//  8. record   losses, learning rates, weights and phase seconds.
//
// Each part runs in a Torch user scope named cellgan::<part> (gather,
// fitness_samples, fitness_game, select, train, score_copies, replace,
// mixture; CellBlock adds snapshots), which Torch's profiler and
// bench_generation_ops see.
//
// Determinism: right after the gather, the cell's streams (its SplitMix64
// and Torch generators of its own, seed_generation) are seeded from (seed,
// cell, generation), and nothing draws from Torch's global generator, so
// the result depends on nothing but the inputs, wherever the cell runs.
//
// Thread-safety: one CellTrainer per training thread.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/generation_record.h"
#include "common/nn/ensemble.h"
#include "common/nn/scores.h"
#include "common/nn/training_data.h"
#include "common/rng.h"
#include "worker/cell_faults.h"
#include "worker/cell_state.h"

namespace cellgan {

// A neighbour cell's centre pair as it was when the generation began:
// either encoded with Adam state (Individual::encode(), as the halo
// exchange carries it), or, for a cell of the same worker that has not
// trained yet this generation, its individuals themselves (`live_*`; the
// bytes are then null), read without being changed. Both give the same
// individuals, bit for bit. Non-owning: what it points to must outlive
// the run_generation() call it is passed to.
struct NeighbourCentre {
  const std::vector<std::uint8_t>* generator = nullptr;
  const std::vector<std::uint8_t>* discriminator = nullptr;
  const Individual* live_generator = nullptr;
  const Individual* live_discriminator = nullptr;
  int cell = -1;  // the neighbour's cell, for events lines (-1: not said)
};

struct GenerationWorkingSet;
class PairGame;

// One cell's generation between the parts of CellTrainer (below); movable,
// so a worker keeps one per cell.
struct CellGeneration {
  CellGeneration();
  CellGeneration(CellGeneration&&) noexcept;
  CellGeneration& operator=(CellGeneration&&) noexcept;
  ~CellGeneration();

  CellState* state = nullptr;
  GenerationRecord record;
  std::unique_ptr<GenerationWorkingSet> work;
  std::vector<NeighbourCentre> neighbours;  // the working set points into them
};

class CellTrainer {
 public:
  // `data` (the run's training data) and `scorer` (for the mixture
  // objective) must outlive the trainer. An `isolated` cell (layout
  // per_class: no neighbours) scores a mixture of one generator only on
  // preview_generation()s, as data_parallel does.
  CellTrainer(const Config& config, const TrainingData& data, SampleScorer& scorer, bool isolated = false);
  CellTrainer(CellTrainer&&) noexcept;
  ~CellTrainer();

  // A cell's initial state: fresh individuals seeded from (seed, cell),
  // uniform mixture weights over `neighbour_count` + population slots.
  CellState initial_state(int cell, int neighbour_count) const;

  // Where the cells compute: the training data's device.
  torch::Device device() const { return data_.device(); }

  // Runs one generation. `neighbours` are the centres of the other cells
  // of the neighbourhood, in neighbourhood order. `faults` are the ones
  // injected into this generation (fault_injector.h). The record's events
  // say what was injected and which non-finite individuals were discarded
  // ("cell 3, generation 2: ..."). The same as begin_generation(),
  // train({&generation}) and finish_generation(): a lone cell is a stack of
  // one.
  GenerationRecord run_generation(CellState& state, const std::vector<NeighbourCentre>& neighbours,
                                  const CellFaults& faults = {});

  // A generation in three parts, so that a worker trains all its cells
  // together (cell_block.h):
  // - begin_generation: steps 0-3 (faults, gather, fitness, selection).
  //   Reads `neighbours` (and what they point to) and changes `state`'s
  //   individuals' fitness, loss kinds and, for faults, weights; the
  //   neighbours are not read after it returns. `state` must outlive the
  //   generation and not be changed until finish_generation.
  // - train: steps 4 and 5 of every generation given (all begun by this
  //   trainer), in lockstep as stacked networks (lockstep_training.h);
  //   each cell draws from its own streams, so the result of a cell does not
  //   depend on the others. The train seconds are shared out evenly.
  // - finish_generation: steps 6-8; returns the record.
  CellGeneration begin_generation(CellState& state, const std::vector<NeighbourCentre>& neighbours,
                                  const CellFaults& faults = {});
  // begin_generation() in three parts, so that a worker plays the fitness
  // games of several cells at once (cell_block.h); each cell's result is
  // the one begin_generation() gives:
  // - prepare_generation: steps 0 and 1, the seed, and step 2's draws.
  //   `neighbours` (and what they point to) are read until select()
  //   returns, and must not change before.
  // - play_together: step 2's game of every generation given whose game
  //   decides something (game_decides_nothing() of generation_steps.h), in
  //   one PairGame::play_cells on the first trainer's stacks; the evaluate
  //   seconds are shared out evenly over the cells that played.
  // - select: step 3.
  CellGeneration prepare_generation(CellState& state, const std::vector<NeighbourCentre>& neighbours,
                                    const CellFaults& faults = {});
  static void play_together(const std::vector<CellTrainer*>& trainers,
                            const std::vector<CellGeneration*>& generations);
  void select(CellGeneration& generation);
  void train(const std::vector<CellGeneration*>& generations);
  // train() (steps 4 and 5, lockstep_training.h) of generations begun by
  // several trainers, generations[i] by trainers[i] (per_class: each class
  // cell's trainer has its own data): in one lockstep when their batch
  // counts and batch sizes agree, else each as a stack of its own.
  static void train_together(const std::vector<CellTrainer*>& trainers,
                             const std::vector<CellGeneration*>& generations);
  GenerationRecord finish_generation(CellGeneration& generation);
  // finish_generation() of one generation's cells, begun by trainers of
  // one block (generations[i] by trainers[i]) that share a scorer and its
  // settings (std::logic_error otherwise): steps 6 and 8 cell by cell,
  // step 7 of every cell in one evolve_mixtures() call; the records in
  // order, each the one finish_generation() gives alone.
  static std::vector<GenerationRecord> finish_together(const std::vector<CellTrainer*>& trainers,
                                                       const std::vector<CellGeneration*>& generations);

  // The cell's ensemble: its mixture generators and weights.
  static Ensemble ensemble(const CellState& state);
  // The bytes of ensemble(state).encode() appended to `w`, written from the
  // state without copying its networks; and a bound of their size.
  static void encode_ensemble(const CellState& state, ByteWriter& w);
  static std::size_t encoded_ensemble_bound(const CellState& state);

  // Mutates an individual's lr in place (step 5, mutate_learning_rate() of
  // generation_steps.h with the trainer's configuration); for tests.
  void mutate_learning_rate(Individual& individual, SplitMix64& rng) const;

 private:
  // Step 6 of finish_generation() after the copies' score: the
  // replacement, and the neighbours' generators kept for the mixture.
  void replace(CellGeneration& generation);

  const Config& config_;
  const TrainingData& data_;
  SampleScorer& scorer_;
  std::int64_t batches_per_generation_;
  std::string objective_;  // the key of the ES objective in scorer_.report()
  std::unique_ptr<PairGame> game_;  // the fitness game's stacks, kept from generation to generation
  bool isolated_;
};

}  // namespace cellgan
