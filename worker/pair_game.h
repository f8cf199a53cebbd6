// The fitness game of a generation (play_every_pair() of generation_steps.h)
// played on stacked networks (docs/architecture.md, "Stacked networks"):
// the generators' weights are copied into the rows of a stack that turns
// the latent batch into every generator's fakes in one batched pass, and
// the discriminators' into a stack that scores the real batch, then each
// generator's fakes, in a batched pass each. The losses of every pair are then taken per member
// (losses.h, LossMean::kPerMember) and read in one copy.
//
// A pair's losses depend on its two networks and the batches only, not on
// which others play (each member's products are its own, stacked_linear.h;
// its elementwise kernels are laid out per member, stacked_tensor.h). They
// may differ from a pair played alone in the last bits.
//
// The stacks are kept from game to game (their rows are overwritten), one
// per role and size. Kinds that are not stacked (stacked_networks.h) play
// one pair at a time.
//
// Thread-safety: one PairGame per training thread; builds stacks from
// Torch's global generator (values then overwritten): hold
// lock_torch_generator().
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

class PairGame {
 public:
  PairGame();
  ~PairGame();
  PairGame(const PairGame&) = delete;
  PairGame& operator=(const PairGame&) = delete;

  // play_every_pair() of generation_steps.h, whose contract it keeps.
  void play(const std::vector<Individual*>& generators, const std::vector<Individual*>& discriminators,
            const torch::Tensor& real, const torch::Tensor& z, BceForm bce, PlayedOutputs* reuse);

 private:
  // A stack of `members` rows of `role` (the layers only: the game needs
  // no Adam state), for individuals like `like`.
  StackedNetworkImpl& stack_of(const Individual& like, std::int64_t members);

  std::map<std::pair<Role, std::int64_t>, std::shared_ptr<StackedNetworkImpl>> stacks_;
};

}  // namespace cellgan
