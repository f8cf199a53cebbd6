// The layers of stacked networks (stacked_networks.h): the mlp and toy
// bodies of networks.cpp as StackedLinear layers, the dcgan, sngan and
// dcgan_conditional ones as stacked_dcgan.h's.
#include "common/nn/stacked_networks.h"

#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

#include "common/nn/stacked_dcgan.h"
#include "common/nn/precision.h"

namespace cellgan {

bool is_stacked(NetworkKind kind) {
  switch (kind) {
    case NetworkKind::kMlp:
    case NetworkKind::kToy:
    case NetworkKind::kDcgan:
    case NetworkKind::kSngan:
    case NetworkKind::kDcganConditional:
      return true;
  }
  return false;
}

StackedNetworkImpl::StackedNetworkImpl(Role role, const NetworkShape& shape, std::int64_t members,
                                       InitialWeights weights)
    : role_(role), shape_(shape), members_(members) {
  if (!is_stacked(shape.kind))
    throw std::invalid_argument(fmt::format("StackedNetwork: network kind {} is not stacked yet", to_string(shape.kind)));
  if (members < 1) throw std::invalid_argument("StackedNetwork: a stack has at least one member");
  if (shape.kind == NetworkKind::kDcgan || shape.kind == NetworkKind::kSngan ||
      shape.kind == NetworkKind::kDcganConditional) {
    convolutional_ =
        register_module("convolutional", std::make_shared<StackedDcganImpl>(role, shape, members, weights));
    drawn_ = weights == InitialWeights::kDrawn;
    return;
  }
  const HiddenMlpWidths widths =
      role == Role::kGenerator ? generator_mlp_widths(shape) : discriminator_mlp_widths(shape);
  for (std::int64_t i = 0; i <= widths.layers; ++i) {
    const std::int64_t in = i == 0 ? widths.in : widths.hidden;
    const std::int64_t out = i == widths.layers ? widths.out : widths.hidden;
    layers_.push_back(register_module("layer" + std::to_string(i), StackedLinear(members, in, out, weights)));
  }
  drawn_ = weights == InitialWeights::kDrawn;
  if (role == Role::kGenerator && shape.kind == NetworkKind::kMlp) output_ = Output::kTanh;
  if (role == Role::kDiscriminator && shape.d_output == DiscriminatorOutput::kProbability) output_ = Output::kSigmoid;
}

torch::Tensor StackedNetworkImpl::forward(const torch::Tensor& x) {
  const std::int64_t width = role_ == Role::kGenerator ? shape_.latent_dim : shape_.data_dim;
  if (x.dim() != 3 || x.size(0) != members_ || x.size(2) != width)
    throw std::invalid_argument(fmt::format("StackedNetwork::forward: expected a [{}, B, {}] tensor, got [{}]",
                                            members_, width, fmt::join(x.sizes(), ", ")));
  if (convolutional_) return convolutional_->forward(x);
  torch::Tensor h = x;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    h = layers_[i]->forward(h);
    if (i + 1 < layers_.size()) h = torch::leaky_relu(h, kLeakySlope);
  }
  switch (output_) {
    case Output::kTanh:
      return member_aligned(h, [](const torch::Tensor& t) { return torch::tanh(t); });
    case Output::kSigmoid:
      return member_aligned(h, [](const torch::Tensor& t) { return torch::sigmoid(widened(t)); });
    case Output::kLinear:
      break;
  }
  return h;
}

std::vector<StackedTensor> StackedNetworkImpl::parameter_tensors() const {
  if (convolutional_) return convolutional_->parameter_tensors();
  std::vector<StackedTensor> tensors;
  for (const StackedLinear& layer : layers_) {
    for (StackedTensor& t : layer->tensors()) tensors.push_back(std::move(t));
  }
  return tensors;
}

std::vector<StackedTensor> StackedNetworkImpl::buffer_tensors() const {
  return convolutional_ ? convolutional_->buffer_tensors() : std::vector<StackedTensor>{};
}

bool StackedNetworkImpl::draws_dropout() const {
  return convolutional_ && convolutional_->drops_out() && is_training();
}

void StackedNetworkImpl::set_member_generators(std::vector<at::Generator> generators) {
  if (convolutional_) convolutional_->set_member_generators(std::move(generators));
}

void load_weights(StackedNetworkImpl& stack, const std::vector<const Individual*>& individuals) {
  if (static_cast<std::int64_t>(individuals.size()) != stack.members())
    throw std::invalid_argument(
        fmt::format("load_weights: {} individuals for {} members", individuals.size(), stack.members()));
  for (const bool buffers : {false, true}) {
    const std::vector<StackedTensor> rows = buffers ? stack.buffer_tensors() : stack.parameter_tensors();
    std::vector<std::vector<torch::Tensor>> members(rows.size());
    for (const Individual* individual : individuals) {
      auto& module = const_cast<Individual&>(*individual).module();
      const std::vector<torch::Tensor> own = buffers ? module.buffers() : module.parameters();
      if (own.size() != rows.size())
        throw std::invalid_argument("load_weights: an individual's network differs from the stack's");
      for (std::size_t i = 0; i < rows.size(); ++i) members[i].push_back(own[i]);
    }
    for (std::size_t i = 0; i < rows.size(); ++i) set_member_rows(rows[i], rows[i].stacked, 0, members[i]);
  }
}

}  // namespace cellgan
