// The fitness game of a generation (play_every_pair() of generation_steps.h)
// played on stacked networks (docs/architecture.md, "Stacked networks"),
// for one cell or for several cells at once (a worker's cells on a GPU):
// the generators' weights are copied into the rows of a stack that turns
// each cell's latent batch into each generator's fakes in one batched pass,
// and the discriminators' into a stack that scores each cell's real batch,
// then its generators' fakes, a batched pass each (the k-th generator of
// every cell in one pass). Only the pairs of one cell play each other. The
// losses of every pair are then taken per member (losses.h), in one set of
// kernels for all the cells when they agree in their numbers of
// generators, discriminators and rows (else a set a cell), and read in one
// copy. On the CPU a member's mean is ATen's (LossMean::kPerMember: a row's
// sum does not depend on the rows beside it there); on a GPU it is summed
// in a fixed order (LossMean::kPerMemberInFixedOrder), since a CUDA
// reduction's blocking depends on how many members it reduces.
//
// A pair's losses depend on its two networks and its cell's batches only,
// not on which others play, in its cell or in the others (each member's
// products are its own, stacked_linear.h; its elementwise kernels are laid
// out per member, stacked_tensor.h): on the CPU the cells played together
// give the bits of the cells played one by one. On a GPU that holds where
// cuBLAS and cuDNN pick the same kernels for stacks of other sizes, which
// nothing promises (a batched product's or grouped convolution's algorithm
// may change with the number of members): tests/gpu (Gpu.CellsBegun...,
// Gpu.CellsWhoseGameLosses...) measure it. A pair may differ from a pair
// played alone in the last bits.
//
// The stacks are kept from game to game (their rows are overwritten), one
// per role and size. Kinds that are not stacked (stacked_networks.h) play
// one pair at a time.
//
// Thread-safety: one PairGame per training thread; its stacks are made
// undrawn (initial_weights.h), so it draws nothing from Torch's global
// generator.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/nn/individual.h"

namespace cellgan {

struct PlayedOutputs;
class StackedNetworkImpl;

// One cell's game: every generator against every discriminator, on the
// cell's fitness batches `real` and `z`; `reuse` as in play_every_pair().
struct CellGame {
  std::vector<Individual*> generators;
  std::vector<Individual*> discriminators;
  torch::Tensor real;
  torch::Tensor z;
  PlayedOutputs* reuse = nullptr;
};

class PairGame {
 public:
  PairGame();
  ~PairGame();
  PairGame(const PairGame&) = delete;
  PairGame& operator=(const PairGame&) = delete;

  // play_every_pair() of generation_steps.h, whose contract it keeps.
  void play(const std::vector<Individual*>& generators, const std::vector<Individual*>& discriminators,
            const torch::Tensor& real, const torch::Tensor& z, BceForm bce, PlayedOutputs* reuse);
  // Every cell's game (play()'s contract, per cell) in one set of batched
  // passes. The cells' networks must be of one shape and their batches
  // agree in shape.
  void play_cells(const std::vector<CellGame>& cells, BceForm bce);

 private:
  // A stack of `members` rows of `role` (the layers only: the game needs
  // no Adam state), for individuals like `like`.
  StackedNetworkImpl& stack_of(const Individual& like, std::int64_t members);
  // Every generator's fakes, cell by cell, from its cell's `reuse` where it
  // has them, the others from one stack (added to `reuse`).
  std::vector<std::vector<torch::Tensor>> fakes_of(const std::vector<const CellGame*>& cells);
  // Every discriminator's output on its cell's real batch, row r of `d`
  // (cell c's from first_row[c]), from `reuse` where every one has it, else
  // from one pass of `d` (added to `reuse`).
  static std::vector<torch::Tensor> real_outputs_of(const std::vector<const CellGame*>& cells, StackedNetworkImpl& d,
                                                    const std::vector<std::int64_t>& first_row);

  std::map<std::pair<Role, std::int64_t>, std::shared_ptr<StackedNetworkImpl>> stacks_;
};

}  // namespace cellgan
