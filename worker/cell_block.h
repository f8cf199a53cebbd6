// The cells one worker trains: their states, the trainer, and one
// generation over all of them given the halos of the neighbours.
//
// Runs with no MPI; the in-process and MPI runs both use it, which keeps
// a cell's result independent of which worker holds it.
//
// Thread-safety: belongs to the training thread.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "common/comm/protocol.h"
#include "grid/partition.h"
#include "worker/cell_trainer.h"
#include "worker/worker_layout.h"

namespace cellgan {

class FaultInjector;

// How many of a worker's `cells` begin their generation together on a GPU
// (CellBlock::run_generation): all of them, or for the convolutional kinds
// (dcgan, sngan, dcgan_conditional) as many as keep a fitness game to 64
// discriminators (`population` + `hood_size` - 1 each), at least one.
std::size_t cells_per_game_on_gpu(NetworkKind kind, std::int64_t population, std::size_t hood_size,
                                  std::size_t cells);

class CellBlock {
 public:
  // `data` and `scorer` must outlive the block. The cells start fresh
  // (from.generation == 0) or from the checkpoint `from` (InputError when a
  // cell's file is missing, corrupt, or of another generation).
  CellBlock(const Config& config, const GridShape& grid, std::vector<int> cells, const TrainingData& data,
            SampleScorer& scorer, const ResumeFrom& from = {});
  // Isolated cells (layout per_class): each cell has no neighbour but
  // itself and trains on its own data, `data[i]` for cells[i] (each must
  // outlive the block). run_generation then needs no halos.
  struct Isolated {
    std::vector<const TrainingData*> data;
  };
  CellBlock(const Config& config, const GridShape& grid, std::vector<int> cells, const Isolated& isolated,
            SampleScorer& scorer, const ResumeFrom& from = {});

  const std::vector<int>& cells() const { return cells_; }
  std::int64_t generation() const;

  // The encoded centre (G, D) of each of `cells` (cells of the block): what
  // the other workers need of it.
  std::map<int, std::pair<Bytes, Bytes>> centres(const std::vector<int>& cells) const;

  // One generation of every cell; `halos` are the other workers' cells it
  // needs. Every cell begins its generation (steps 0-3, in the order of
  // cells()), then all train together (CellTrainer::train_together: one
  // stack of every cell's copies; per_class's cells too when their batch
  // counts agree), then each finishes (steps 6-8). A cell reads its
  // neighbours in this block as they were when the generation began: live
  // while they have not begun, and from a copy taken just before one
  // begins, kept only while a later cell still reads it (an
  // Individual::snapshot, which shares the weights: a cell's individuals are
  // replaced, never changed in place).
  // On a GPU (or after set_cells_per_game) the cells are begun in
  // groups: each cell of a group prepares (steps 0 and 1) in order, then
  // they play their fitness games in one PairGame::play_cells, then each
  // selects; a local neighbour read by its own group or a later one is read
  // from a copy taken before the group begins. A group is every cell, or for
  // the convolutional kinds as many as keep a game to 64 discriminators. On
  // the CPU the cells begin one by one (no gain there, and every cell's game
  // at once would raise the peak memory). Every grouping gives the same bits.
  // Each cell draws from streams of its own and nothing draws from Torch's
  // global generator (no lock_torch_generator() is needed), so a cell's
  // result does not depend on the other cells of the block or on other
  // blocks training in the same process. `faults` (null = none) says what each cell's
  // generation suffers.
  std::vector<GenerationRecord> run_generation(const std::map<int, HaloMessage>& halos,
                                               const FaultInjector* faults = nullptr);

  // How many cells run_generation() begins together (above; 1: one by
  // one): cells_per_game_on_gpu() on a GPU, else 1, unless set.
  std::size_t cells_per_game() const { return cells_per_game_; }
  void set_cells_per_game(std::size_t cells) { cells_per_game_ = cells; }

  // The worker's answer to the master's gather: encode(ResultMessage) of
  // every cell's final ensemble, written straight from the cells' states,
  // so no network is copied and no ensemble is held twice.
  Bytes encoded_results() const;

  // Every cell's state encoded for a checkpoint (cell_checkpoint.h);
  // refuses (std::runtime_error) a cell with a non-finite individual,
  // which must never be saved.
  std::vector<CellBytes> checkpoint() const;

 private:
  const Config& config_;
  GridShape grid_;
  std::vector<int> cells_;
  bool isolated_ = false;
  std::size_t cells_per_game_ = 1;
  std::vector<CellTrainer> trainers_;  // one for all cells, or one per cell (isolated)
  std::vector<CellState> states_;

  void start(const ResumeFrom& from);
  std::vector<CellGeneration> begin_generations(const std::map<int, HaloMessage>& halos, const FaultInjector* faults);
  // The cell's neighbourhood, itself first: just itself when isolated.
  std::vector<int> hood(int cell) const;
  CellTrainer& trainer_of(std::size_t i) { return trainers_[isolated_ ? i : 0]; }
};

}  // namespace cellgan
