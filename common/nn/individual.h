// An individual of the coevolution (docs/architecture.md, "One generation of one cell"): one network (generator or
// discriminator), its Adam state and its own learning rate, plus the
// bookkeeping the algorithm keeps on it (fitness, loss kind, origin).
//
// The learning rate lives in the individual and is written into the Adam
// param group by set_learning_rate(); restoring Adam state (clone(),
// decode()) never brings back an older learning rate. This is the fix of
// Lipizzaner's bug where a mutated lr never reached the optimizer;
// set_adam_learning_rate() lets training put that behaviour back
// (training.mutated_lr_reaches_adam: false) to compare the two.
//
// encode()/decode() give a flat, bit-exact byte form (parameters, buffers,
// Adam moments and step counts, lr, fitness, loss kind; individual_bytes.h)
// used for the neighbour exchange and for checkpoints.
//
// Device: an individual's network and Adam state live on one device
// (device.h), chosen when it is made; its bytes do not depend on it, so an
// individual encoded on a GPU decodes on the CPU and the other way round.
// The initial weights are drawn on the CPU and then moved, so they are the
// same bits on every device.
//
// Thread-safety: an Individual belongs to one thread at a time.
#pragma once

#include <torch/nn.h>
#include <torch/optim/adam.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/config.h"
#include "common/nn/individual_bytes.h"
#include "common/nn/networks.h"

namespace cellgan {

class ByteWriter;

struct AdamSettings {
  double beta1 = 0.5;
  double beta2 = 0.999;
};

class Individual {
 public:
  // A freshly initialised network (uses Torch's global generator: seed it
  // first for reproducible weights).
  Individual(Role role, const NetworkShape& shape, double learning_rate, AdamSettings adam, LossKind loss,
             torch::Device device = torch::kCPU);

  // An individual whose network's parameters and buffers the caller writes,
  // every one of them (as decode() and clone() do): made as
  // InitialWeights::kUndrawn (initial_weights.h), so nothing is drawn, and on
  // a device other than the CPU no value is copied there from the host.
  static Individual to_be_written(Role role, const NetworkShape& shape, double learning_rate, AdamSettings adam,
                                  LossKind loss, torch::Device device);

  Individual(Individual&&) = default;
  Individual& operator=(Individual&&) = default;

  // Deep copy: weights, buffers, Adam state, lr and bookkeeping, made on
  // the individual's device without a trip through the bytes, and equal to
  // decode(encode()): Adam's learning rate becomes learning_rate().
  Individual clone() const;
  // The same without the Adam state (a fresh one): for ensembles and
  // mixtures, which only sample.
  Individual clone_weights() const;
  // The same as clone(), but the parameters and Adam moments are this
  // individual's own tensors, shared (the buffers, which a forward pass in
  // training mode changes, are copied): no copy of the weights, and as good
  // as clone() for as long as neither's parameters or moments are changed
  // in place (an Adam step on the individual itself, a write into its
  // tensors). A cell's individuals never are: training steps copies held as
  // stack rows and gives new individuals (worker/lockstep_training.h),
  // replacement moves whole individuals in, and the fault `nan` gives the
  // poisoned ones new tensors. For a copy of an individual as it was, kept
  // while that individual may be replaced (CellBlock's copies of its cells'
  // centres, tournament winners, neighbours read in the same process).
  Individual snapshot() const;
  // The same without the Adam state (a fresh one), as clone_weights().
  Individual snapshot_weights() const;

  // Adam's state of parameter i (in module().parameters() order), if Adam
  // has one for it; and setting it (the moments are kept as given, of the
  // parameter's sizes and device).
  struct Moments {
    std::int64_t step = 0;
    torch::Tensor exp_avg;
    torch::Tensor exp_avg_sq;
  };
  std::optional<Moments> moments(std::size_t i) const;
  void set_moments(std::size_t i, Moments m);

  Role role() const { return role_; }
  const NetworkShape& shape() const { return shape_; }
  const AdamSettings& adam_settings() const { return adam_; }
  const torch::Device& device() const { return device_; }
  Generator& generator();
  Discriminator& discriminator();
  torch::nn::Module& module();
  // Its own Adam. A step changes the parameters and moments in place, so
  // its snapshots' too (they share them): cellgan steps copies as stack
  // rows, and code that steps an individual itself clones it first.
  torch::optim::Adam& optimizer() { return *optimizer_; }

  double learning_rate() const { return learning_rate_; }
  // Sets the individual's lr and the lr of its Adam param group.
  void set_learning_rate(double lr);
  // Sets the lr of the Adam param group only (training.mutated_lr_reaches_adam
  // false); learning_rate() keeps the individual's own. Not part of the
  // bytes: decode() gives Adam learning_rate() again.
  void set_adam_learning_rate(double lr);
  double adam_learning_rate() const;

  // Fitness is a loss: lower is better. NaN until evaluated.
  double fitness = std::numeric_limits<double>::quiet_NaN();
  // The loss this individual trains with (never kMustangs: resolved).
  LossKind loss = LossKind::kBce;
  // The cell this individual was last trained in.
  int source_cell = -1;

  // Flat bytes; decode() needs the same shape and Adam settings. Without
  // the optimizer state (for ensembles, which only sample) the bytes are a
  // third of the size and decode to a fresh Adam state.
  std::vector<std::uint8_t> encode(bool with_optimizer_state = true) const;
  // The same bytes appended to `w`, and a bound of their size: exact
  // without the optimizer state, or once Adam has taken a step.
  void encode_to(ByteWriter& w, bool with_optimizer_state = true) const;
  std::size_t encoded_size_bound(bool with_optimizer_state = true) const;
  // `with_optimizer_state = false` skips any Adam state in the bytes and
  // gives a fresh one: a third of the memory, for individuals that are only
  // evaluated or sampled (the bytes are still checked whole). The
  // individual lives on `device`.
  static Individual decode(const std::vector<std::uint8_t>& bytes, const NetworkShape& shape, AdamSettings adam,
                           bool with_optimizer_state = true, torch::Device device = torch::kCPU);

  // Frees the gradient tensors. They are not part of the state (encode()
  // leaves them out) and the next backward pass recreates them.
  void release_gradients();

  // True when the learning rate and every parameter and Adam moment are
  // finite (one wait for the device): are_finite() of this one.
  bool is_finite() const;
  // is_finite() of each of `individuals` (none null, all on one device), in
  // order, with one wait for the device for them all (two when a sum is not
  // finite and is looked at again), so that a GPU is not drained once per
  // individual; there a few kernels for them all (grouped_reduction.h).
  static std::vector<bool> are_finite(const std::vector<const Individual*>& individuals);

 private:
  Individual(Role role, const NetworkShape& shape, AdamSettings adam, torch::Device device, InitialWeights weights);
  void make_optimizer(double lr);
  enum class MomentsCopy { kFresh, kCopied, kShared };
  // The copy of clone(), clone_weights() and the snapshots: the moments as
  // `moments_copy` says, the parameters copied or (`share_weights`) shared.
  Individual copy(MomentsCopy moments_copy, bool share_weights) const;

  Role role_;
  NetworkShape shape_;
  AdamSettings adam_;
  torch::Device device_ = torch::kCPU;
  Generator generator_{nullptr};
  Discriminator discriminator_{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer_;
  double learning_rate_ = 0.0;
};

}  // namespace cellgan
