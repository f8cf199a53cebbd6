// Stacked networks (docs/architecture.md, "Stacked networks"): P networks
// of one role and shape held as tensors with a leading member dimension and
// run in lockstep, one batched kernel per layer. A member's output and
// gradient depend on its own rows only.
//
// StackedNetwork is the layers: for the mlp and toy kinds exactly those of
// networks.h (hidden_mlp widths from generator_mlp_widths /
// discriminator_mlp_widths, LeakyReLU 0.2 between layers, Tanh after the
// mlp generator, Sigmoid after a probability discriminator), each Linear a
// StackedLinear. Inputs are [P, B, in], outputs [P, B, out].
//
// StackedGenerator / StackedDiscriminator are P individuals (individual.h)
// as rows: the network, a BatchedAdam (batched_adam.h) over its
// parameters, and per member what Individual keeps besides (learning rate,
// fitness, loss kind, source cell). A row reads and writes the Individual
// byte form (individual_bytes.h): row_bytes(p) is, byte for byte,
// Individual::encode() of the individual load_row(p, ...) took, after the
// same training. Halos, checkpoints and ensembles therefore keep their
// format. Differences from an Individual:
// - one Adam step count per member (an individual keeps one per tensor;
//   load_row refuses bytes whose tensors' counts differ);
// - the Adam learning rate is per member on the device; set_learning_rate
//   sets it with the member's own (as Individual::set_learning_rate),
//   set_adam_learning_rate only Adam's (not part of the bytes).
//
// The dcgan, sngan and dcgan_conditional kinds are the layers of
// stacked_dcgan.h (convolutions, batch, layer and spectral norm per member:
// one batched kernel per layer on CUDA, each member's own on the CPU;
// dropout with each member's own mask, drawn from the generators set by
// set_member_generators()); the conditional pair's labels ride in each
// member's rows of the inputs (conditional_networks.h).
//
// Thread-safety: a stack belongs to one thread at a time.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/bytes.h"
#include "common/nn/batched_adam.h"
#include "common/nn/individual.h"
#include "common/nn/networks.h"
#include "common/nn/stacked_linear.h"
#include "common/nn/stacked_tensor.h"

namespace cellgan {

class StackedDcganImpl;

// True for the network kinds that stacks hold: every kind (mlp, toy,
// dcgan, sngan and dcgan_conditional).
bool is_stacked(NetworkKind kind);

class StackedNetworkImpl : public torch::nn::Module {
 public:
  // is_stacked(shape.kind) (std::invalid_argument otherwise); fresh rows
  // are drawn from Torch's global generator (stacked_linear.h), unless
  // kUndrawn (initial_weights.h): they then draw nothing and their weights
  // hold no values (drawn() is false).
  StackedNetworkImpl(Role role, const NetworkShape& shape, std::int64_t members,
                     InitialWeights weights = InitialWeights::kDrawn);

  // [P, B, in] -> [P, B, out] (in: latent_dim for a generator, data_dim for
  // a discriminator).
  torch::Tensor forward(const torch::Tensor& x);

  // The rows of the parameters, in the order of the individual network's
  // parameters(), and of its buffers (none for mlp and toy).
  std::vector<StackedTensor> parameter_tensors() const;
  std::vector<StackedTensor> buffer_tensors() const;

  // The generators member p's dropout masks are drawn from, one per
  // member (stacked_dropout.h); kinds without dropout ignore them.
  void set_member_generators(std::vector<at::Generator> generators);
  // True when a training forward pass draws dropout masks (the dcgan and
  // dcgan_conditional discriminators): it reads those generators on the host.
  bool draws_dropout() const;

  Role role() const { return role_; }
  const NetworkShape& shape() const { return shape_; }
  std::int64_t members() const { return members_; }
  // False when the rows hold no values (made kUndrawn).
  bool drawn() const { return drawn_; }

 private:
  enum class Output { kLinear, kTanh, kSigmoid };
  Role role_;
  NetworkShape shape_;
  std::int64_t members_;
  std::vector<StackedLinear> layers_;             // mlp, toy
  std::shared_ptr<StackedDcganImpl> convolutional_;  // dcgan, sngan, dcgan_conditional
  Output output_ = Output::kLinear;
  bool drawn_ = true;
};
TORCH_MODULE(StackedNetwork);

// Row p of `stack` takes individuals[p]'s parameters and buffers (not its
// Adam state), for every row: one copy a tensor (set_member_rows). One
// individual a member, each of the stack's network; std::invalid_argument
// otherwise.
void load_weights(StackedNetworkImpl& stack, const std::vector<const Individual*>& individuals);

// P individuals of one role as rows (see the top of this file).
class StackedMembers {
 public:
  std::int64_t size() const { return members_; }
  Role role() const { return role_; }
  const NetworkShape& shape() const { return shape_; }
  const AdamSettings& adam_settings() const { return adam_; }
  const torch::Device& device() const { return device_; }
  StackedNetwork& network() { return network_; }
  // The members' Adam; on a GPU its parameters and moments live in one
  // buffer each (BatchedAdamOptions::one_buffer), so a step is a few kernels.
  BatchedAdam& optimizer() { return *optimizer_; }

  // [P, B, in] -> [P, B, out].
  torch::Tensor forward(const torch::Tensor& x) { return network_->forward(x); }
  // Frees every member's gradient tensors (Individual::release_gradients):
  // not state; the next backward pass recreates them.
  void release_gradients();

  double learning_rate(std::int64_t p) const;
  void set_learning_rate(std::int64_t p, double lr);
  void set_adam_learning_rate(std::int64_t p, double lr);
  // Every member's own rates and Adam's at once: Adam's in one copy to the
  // device. adam_learning_rates() reads Adam's back from the device.
  void set_learning_rates(const std::vector<double>& own, const std::vector<double>& adam);
  std::vector<double> adam_learning_rates() const;

  // Per member, as Individual's fields of the same names.
  std::vector<double> fitness;
  std::vector<LossKind> loss;
  std::vector<int> source_cell;

  // Row p becomes the individual: its network, Adam state, learning rates
  // (its own and Adam's) and bookkeeping. Same role and shape required.
  void load_row(std::int64_t p, const Individual& individual);
  // Row p from Individual::encode() bytes (with or without the optimizer
  // state); Adam's learning rate becomes the bytes' learning rate, as
  // Individual::decode gives. InputError naming "individual" on foreign,
  // short or mismatched bytes, or a role other than the stack's; the row
  // is left as it was.
  void load_row(std::int64_t p, const Bytes& bytes);
  // Row p in the Individual byte form (reads the step count back from the
  // device).
  Bytes row_bytes(std::int64_t p, bool with_optimizer_state = true) const;
  // Row p as an Individual on the stack's device, equal to
  // Individual::decode of row_bytes(p) (and drawing from Torch's global
  // generator as decode does), with Adam's learning rate too; copied
  // device to device.
  Individual to_individual(std::int64_t p) const;
  // to_individual() of every row, in order, reading the step counts and
  // Adam's rates from the device once for them all (two reads, not two a row).
  std::vector<Individual> to_individuals() const;
  // load_row(p, *individuals[p]) of every row (one individual a member,
  // std::invalid_argument otherwise), with one copy a tensor for them all.
  void load_rows(const std::vector<const Individual*>& individuals);

 protected:
  StackedMembers(Role role, const NetworkShape& shape, std::int64_t members, double learning_rate,
                 AdamSettings adam, LossKind loss_kind, torch::Device device, InitialWeights weights);

 private:
  void check_member(std::int64_t p, const char* what) const;
  // to_individual(p) given the row's step count and Adam's rate, read already.
  Individual row_individual(std::int64_t p, std::int64_t step, double adam_learning_rate) const;

  Role role_;
  NetworkShape shape_;
  std::int64_t members_;
  AdamSettings adam_;
  torch::Device device_;
  StackedNetwork network_{nullptr};
  std::unique_ptr<BatchedAdam> optimizer_;
  std::vector<double> learning_rates_;
};

class StackedGenerator : public StackedMembers {
 public:
  // `weights`: as StackedNetworkImpl's; kUndrawn for a stack whose every
  // row is loaded (load_row) before it is used.
  StackedGenerator(const NetworkShape& shape, std::int64_t members, double learning_rate, AdamSettings adam,
                   LossKind loss, torch::Device device = torch::kCPU, InitialWeights weights = InitialWeights::kDrawn)
      : StackedMembers(Role::kGenerator, shape, members, learning_rate, adam, loss, device, weights) {}
};

class StackedDiscriminator : public StackedMembers {
 public:
  StackedDiscriminator(const NetworkShape& shape, std::int64_t members, double learning_rate, AdamSettings adam,
                       LossKind loss, torch::Device device = torch::kCPU,
                       InitialWeights weights = InitialWeights::kDrawn)
      : StackedMembers(Role::kDiscriminator, shape, members, learning_rate, adam, loss, device, weights) {}
};

}  // namespace cellgan
