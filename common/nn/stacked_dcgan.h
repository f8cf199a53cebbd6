// The dcgan, sngan and dcgan_conditional networks (networks.h,
// conditional_networks.h) for P members at once (docs/architecture.md,
// "Stacked networks"), layer for layer:
// - G  StackedLinear z -> 128*7*7, StackedBatchNorm2d, ReLU, nearest
//      Upsample x2, StackedConv2d 128->64 k3 p1, StackedBatchNorm2d, ReLU,
//      Upsample x2, StackedConv2d 64->1 k3 p1, Tanh;
// - D  (dcgan) StackedConv2d 1->32 k4 s2 p1, LeakyReLU .2, dropout .3,
//      StackedConv2d 32->64 k4 s2 p1, StackedBatchNorm2d (a critic:
//      StackedLayerNorm over [64, 7, 7]), LeakyReLU .2, dropout .3,
//      StackedLinear 64*7*7 -> 1, Sigmoid unless a critic;
// - D  (sngan) the same convolutions and Linear, each weight through a
//      StackedSpectralNorm, LeakyReLU .2 after each convolution, no
//      normalisation, no dropout, Sigmoid unless a critic;
// - dcgan_conditional: G is the dcgan G fed [z, onehot(y)], y the argmax
//      of each latent row's label slots, and returns [image, onehot(y)];
//      D is the dcgan D (always with StackedBatchNorm2d) whose first
//      convolution takes 1 + 10 channels, the image and the label as
//      constant planes. A member's labels ride in its own rows of the
//      inputs, as they do for one conditional network.
// Inputs are [P, B, in] and outputs [P, B, out] as for every stacked
// network; the Linear layers run stacked (StackedLinear). Between them, on
// CUDA the members travel together as [P, B, C, H, W] through the stacked
// layers' batched kernels; on the CPU each member runs through its own
// convolutions, batch norms and dropout one after another (the layers'
// member_forward()), which avoids stacking its activations between layers
// (each stack a copy, and its backward another): on the CPU a batched
// kernel saves nothing there. Tanh and Sigmoid are laid out per member
// (member_aligned() of stacked_tensor.h).
//
// parameter_tensors() and buffer_tensors() list the rows in the order of
// the individual network's parameters() and buffers(): the Individual
// byte form (individual_bytes.h) of a row is the member's.
//
// Dropout draws each member's mask from the generator set for it
// (set_member_generators(), stacked_dropout.h) where that generator is (a
// GPU's own generators draw there, member_draws.h), on the CPU member by
// member (a member's two masks, then the next member's), on CUDA layer by
// layer; a
// training forward pass of a dcgan discriminator without them is a
// std::logic_error. Or the masks are drawn ahead, the same masks in the
// same order (stage_dropout_pass()).
//
// Thread-safety: a module instance belongs to one thread at a time.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "common/nn/individual.h"
#include "common/nn/networks.h"
#include "common/nn/stacked_batch_norm.h"
#include "common/nn/stacked_conv.h"
#include "common/nn/stacked_layer_norm.h"
#include "common/nn/stacked_linear.h"
#include "common/nn/stacked_spectral_norm.h"
#include "common/nn/stacked_tensor.h"

namespace cellgan {

class StackedDcganImpl : public torch::nn::Module {
 public:
  // shape.kind dcgan, sngan or dcgan_conditional (std::invalid_argument
  // otherwise).
  // kUndrawn (initial_weights.h): the linear and convolutional rows and the
  // spectral norms' u hold no values (the norms' affine rows and running
  // statistics start as ones and zeros here; StackedMembers on a GPU gives
  // them empty storage too).
  StackedDcganImpl(Role role, const NetworkShape& shape, std::int64_t members,
                   InitialWeights weights = InitialWeights::kDrawn);

  // [P, B, in] -> [P, B, out].
  torch::Tensor forward(const torch::Tensor& x);

  std::vector<StackedTensor> parameter_tensors() const;
  std::vector<StackedTensor> buffer_tensors() const;

  // One generator per member (members may share one), for dropout.
  void set_member_generators(std::vector<at::Generator> generators);
  // Whether its training passes draw dropout masks: the discriminators of
  // dcgan and dcgan_conditional (sngan's critic has none).
  bool drops_out() const { return role_ == Role::kDiscriminator && shape_.kind != NetworkKind::kSngan; }

  // Dropout masks drawn ahead of the passes that take them
  // (staged_dropout.h): stage_dropout_pass() draws the masks of one
  // training forward pass of `batch` rows on `device`, in the order that
  // pass would draw them, into the next slots (tensors kept from call to
  // call); from then on every training pass takes the next staged masks
  // instead of drawing (a std::logic_error when none is left).
  // restart_staged_dropout() has the next pass take the first slots again;
  // clear_staged_dropout() has the next stage_dropout_pass() fill them.
  void stage_dropout_pass(std::int64_t batch, torch::Device device);
  void restart_staged_dropout() { staged_next_ = 0; }
  void clear_staged_dropout() { staged_count_ = staged_next_ = 0; }

 private:
  torch::Tensor generate(const torch::Tensor& z);
  torch::Tensor generate_images(const torch::Tensor& z);  // the dcgan G's [P, B, 784]
  torch::Tensor image_planes(const torch::Tensor& x) const;  // [P, B, 784 (+ 10)] -> [P, B, 1 (+ 10), 28, 28]
  torch::Tensor discriminate(const torch::Tensor& x);
  torch::Tensor dropout(const torch::Tensor& x);
  torch::Tensor generate_member_by_member(const torch::Tensor& z);
  torch::Tensor discriminate_member_by_member(const torch::Tensor& x);
  torch::Tensor member_dropout(std::int64_t p, const torch::Tensor& x);
  torch::Tensor discriminator_output(const torch::Tensor& scores) const;
  void build_generator(InitialWeights weights);
  void build_discriminator(InitialWeights weights);

  Role role_;
  NetworkShape shape_;
  std::int64_t members_;
  StackedLinear linear_{nullptr};
  StackedConv2d conv1_{nullptr}, conv2_{nullptr};
  StackedBatchNorm2d norm0_{nullptr}, norm1_{nullptr};  // G: after the Linear and conv1; D: norm1 after conv2
  StackedLayerNorm layer_norm_{nullptr};                // a dcgan critic's
  StackedSpectralNorm sn1_{nullptr}, sn2_{nullptr}, sn_linear_{nullptr};  // sngan D's
  std::vector<at::Generator> generators_;
  std::vector<torch::Tensor> staged_;  // slots of staged masks, in the order the passes take them
  std::size_t staged_count_ = 0, staged_next_ = 0;
  bool staging_ = false;  // passes take staged masks

  torch::Tensor next_slot(const std::vector<std::int64_t>& sizes, torch::Device device);
  torch::Tensor next_staged_mask(const torch::Tensor& x);
};
TORCH_MODULE(StackedDcgan);

}  // namespace cellgan
