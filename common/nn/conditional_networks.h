// The conditional DCGAN pair of the DC-CGAN baseline (network.kind
// dcgan_conditional; seed 003, Tables 3-4): a one-hot class label is fed
// to G and to D. It trains with the unchanged coevolution code because the
// label rides along in the tensors that code already passes around:
// - G's latent vector has kClassCount extra slots, z' = [z, s] (latent_dim
//   = network.latent_dim + 10). Its label is y = argmax(s), uniform over
//   the classes when s ~ N(0, I) as in training, or the class asked for
//   (class_latent). G is a DCGAN generator fed [z, onehot(y)]; it outputs
//   [image, onehot(y)] (784 + 10 values: data_dim 794).
// - D takes [image, onehot(y)], the label as 10 constant 28x28 planes
//   beside the image (11 input channels of a DCGAN discriminator).
// - A real row is [image, onehot(its label)] (TrainingData).
// Everything that samples (sample_mixture, so ensembles, scores, previews
// and PNGs) keeps the image: image_part() drops the label columns.
//
// Thread-safety: pure functions; the modules belong to one thread at a time.
#pragma once

#include <torch/nn.h>

#include <cstdint>
#include <vector>

#include "common/nn/networks.h"

namespace cellgan {

// True for the conditional pair.
inline bool is_conditional(NetworkKind kind) { return kind == NetworkKind::kDcganConditional; }
inline bool is_conditional(const NetworkShape& shape) { return is_conditional(shape.kind); }

// The layers of the conditional generator and discriminator (registered
// by GeneratorImpl / DiscriminatorImpl as their body; D's Sigmoid, which
// DiscriminatorImpl appends, is the body's last layer).
torch::nn::Sequential conditional_generator_body(const NetworkShape& shape, InitialWeights weights);
torch::nn::Sequential conditional_discriminator_body(InitialWeights weights);
// G's and D's forward through those bodies ([N, latent_dim] -> [N, 794];
// [N, 794] -> [N, 1] probabilities).
torch::Tensor conditional_generator_forward(torch::nn::Sequential& body, const torch::Tensor& z,
                                            const NetworkShape& shape);
torch::Tensor conditional_discriminator_forward(torch::nn::Sequential& body, const torch::Tensor& x);

// The images of G's output rows: the first 784 columns for the conditional
// pair, the rows themselves for any other network.
torch::Tensor image_part(const torch::Tensor& samples, const NetworkShape& shape);

// The class of each latent row of the conditional G (argmax of its label slots).
torch::Tensor latent_labels(const torch::Tensor& z, const NetworkShape& shape);
// Sets the label slots of latent rows `z` so that their class is `label`.
void set_latent_label(torch::Tensor& z, const NetworkShape& shape, std::int64_t label);

}  // namespace cellgan
