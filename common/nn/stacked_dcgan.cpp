// The dcgan, sngan and dcgan_conditional networks for P members at once
// (stacked_dcgan.h).
#include "common/nn/stacked_dcgan.h"

#include <torch/torch.h>

#include <fmt/core.h>

#include <stdexcept>

#include "common/nn/conditional_networks.h"
#include "common/nn/member_draws.h"
#include "common/nn/precision.h"
#include "common/nn/stacked_dropout.h"

namespace cellgan {
namespace {

// networks.cpp's geometry for 28x28 images (the row-bytes tests fail if
// the two drift apart).
constexpr std::int64_t kSeedSide = 7;  // 7 -> 14 -> 28
constexpr std::int64_t kGenChannels = 128;
constexpr std::int64_t kGenMidChannels = 64;
constexpr std::int64_t kDiscChannels1 = 32;
constexpr std::int64_t kDiscChannels2 = 64;
constexpr double kDropout = 0.3;

// torch::nn::Upsample(scale_factor {2, 2}, nearest), as networks.cpp has
// it, on one member's [B, C, H, W] or on [P, B, C, H, W].
torch::Tensor upsample_twice(const torch::Tensor& x) {
  namespace F = torch::nn::functional;
  if (x.dim() == 4)
    return F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest));
  const torch::Tensor up =
      F::interpolate(x.flatten(0, 1),
                     F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest));
  return up.view({x.size(0), x.size(1), up.size(1), up.size(2), up.size(3)});
}

}  // namespace

StackedDcganImpl::StackedDcganImpl(Role role, const NetworkShape& shape, std::int64_t members,
                                   InitialWeights weights)
    : role_(role), shape_(shape), members_(members) {
  if (shape.kind != NetworkKind::kDcgan && shape.kind != NetworkKind::kSngan && !is_conditional(shape))
    throw std::invalid_argument(
        fmt::format("StackedDcgan: network kind {} is not dcgan, sngan or dcgan_conditional", to_string(shape.kind)));
  if (members < 1) throw std::invalid_argument("StackedDcgan: a stack has at least one member");
  if (role == Role::kGenerator)
    build_generator(weights);
  else
    build_discriminator(weights);
}

// Registered in the order of the individual's parameters.
void StackedDcganImpl::build_generator(InitialWeights weights) {
  const std::int64_t seed_width = kGenChannels * kSeedSide * kSeedSide;
  linear_ = register_module("linear", StackedLinear(members_, shape_.latent_dim, seed_width, weights));
  norm0_ = register_module("norm0", StackedBatchNorm2d(members_, kGenChannels));
  conv1_ =
      register_module("conv1", StackedConv2d(members_, Conv2dGeometry{kGenChannels, kGenMidChannels, 3, 1, 1}, weights));
  norm1_ = register_module("norm1", StackedBatchNorm2d(members_, kGenMidChannels));
  conv2_ = register_module("conv2", StackedConv2d(members_, Conv2dGeometry{kGenMidChannels, 1, 3, 1, 1}, weights));
}

void StackedDcganImpl::build_discriminator(InitialWeights weights) {
  const std::int64_t planes = is_conditional(shape_) ? 1 + kClassCount : 1;
  conv1_ = register_module("conv1", StackedConv2d(members_, halving(planes, kDiscChannels1), weights));
  conv2_ = register_module("conv2", StackedConv2d(members_, halving(kDiscChannels1, kDiscChannels2), weights));
  if (shape_.kind == NetworkKind::kSngan) {
    sn1_ = register_module("sn1", StackedSpectralNorm(members_, kDiscChannels1, weights));
    sn2_ = register_module("sn2", StackedSpectralNorm(members_, kDiscChannels2, weights));
  } else if (shape_.d_output == DiscriminatorOutput::kScore && !is_conditional(shape_)) {
    layer_norm_ = register_module(
        "layer_norm", StackedLayerNorm(members_, std::vector<std::int64_t>{kDiscChannels2, kSeedSide, kSeedSide}));
  } else {
    norm1_ = register_module("norm1", StackedBatchNorm2d(members_, kDiscChannels2));
  }
  linear_ = register_module("linear", StackedLinear(members_, kDiscChannels2 * kSeedSide * kSeedSide, 1, weights));
  if (shape_.kind == NetworkKind::kSngan)
    sn_linear_ = register_module("sn_linear", StackedSpectralNorm(members_, 1, weights));
}

void StackedDcganImpl::set_member_generators(std::vector<at::Generator> generators) {
  if (static_cast<std::int64_t>(generators.size()) != members_)
    throw std::invalid_argument(fmt::format("StackedDcgan: {} generators for {} members", generators.size(), members_));
  generators_ = std::move(generators);
}

torch::Tensor StackedDcganImpl::forward(const torch::Tensor& x) {
  return role_ == Role::kGenerator ? generate(x) : discriminate(x);
}

torch::Tensor StackedDcganImpl::generate(const torch::Tensor& z) {
  if (is_conditional(shape_)) {
    // conditional_generator_forward() per member: [z, s] -> the images of
    // [z, onehot(argmax s)], then [image, onehot(argmax s)].
    const std::int64_t free = shape_.latent_dim - kClassCount;
    const torch::Tensor label =
        torch::one_hot(z.narrow(2, free, kClassCount).argmax(2), kClassCount).to(torch::kFloat32);
    return torch::cat({generate_images(torch::cat({z.narrow(2, 0, free), label}, 2)), label}, 2);
  }
  return generate_images(z);
}

torch::Tensor StackedDcganImpl::generate_images(const torch::Tensor& z) {
  if (!z.is_cuda()) return generate_member_by_member(z);
  const std::int64_t batch = z.size(1);
  torch::Tensor h = linear_->forward(z).view({members_, batch, kGenChannels, kSeedSide, kSeedSide});
  h = upsample_twice(torch::relu(norm0_->forward(h)));
  h = upsample_twice(torch::relu(norm1_->forward(conv1_->forward(h))));
  h = conv2_->forward(h).view({members_, batch, kImageDim});
  return member_aligned(h, [](const torch::Tensor& t) { return torch::tanh(t); });
}

// The CPU: each member through its own chain of layers, its rows taken
// once by unbind() (see the header).
torch::Tensor StackedDcganImpl::generate_member_by_member(const torch::Tensor& z) {
  const std::int64_t batch = z.size(1);
  const std::vector<torch::Tensor> seeds =
      linear_->forward(z).view({members_, batch, kGenChannels, kSeedSide, kSeedSide}).unbind(0);
  const std::vector<torch::Tensor> w0 = norm0_->weight.unbind(0), b0 = norm0_->bias.unbind(0);
  const std::vector<torch::Tensor> w1 = conv1_->weight.unbind(0), b1 = conv1_->bias.unbind(0);
  const std::vector<torch::Tensor> w2 = norm1_->weight.unbind(0), b2 = norm1_->bias.unbind(0);
  const std::vector<torch::Tensor> w3 = conv2_->weight.unbind(0), b3 = conv2_->bias.unbind(0);
  std::vector<torch::Tensor> images;
  for (std::int64_t p = 0; p < members_; ++p) {
    torch::Tensor h = upsample_twice(torch::relu(norm0_->member_forward(seeds[p], p, w0[p], b0[p])));
    h = conv1_->member_forward(h, w1[p], b1[p]);
    h = upsample_twice(torch::relu(norm1_->member_forward(h, p, w2[p], b2[p])));
    images.push_back(conv2_->member_forward(h, w3[p], b3[p]).view({batch, kImageDim}));
  }
  return member_aligned(torch::stack(images), [](const torch::Tensor& t) { return torch::tanh(t); });
}

torch::Tensor StackedDcganImpl::discriminate_member_by_member(const torch::Tensor& x) {
  const std::int64_t batch = x.size(1);
  const bool sn = shape_.kind == NetworkKind::kSngan;
  const std::vector<torch::Tensor> images = image_planes(x).unbind(0);
  const std::vector<torch::Tensor> w1 = (sn ? sn1_->forward(conv1_->weight) : conv1_->weight).unbind(0);
  const std::vector<torch::Tensor> w2 = (sn ? sn2_->forward(conv2_->weight) : conv2_->weight).unbind(0);
  const std::vector<torch::Tensor> b1 = conv1_->bias.unbind(0), b2 = conv2_->bias.unbind(0);
  const bool normed = norm1_ || layer_norm_;
  const torch::Tensor& norm_weight = norm1_ ? norm1_->weight : layer_norm_ ? layer_norm_->weight : conv2_->bias;
  const torch::Tensor& norm_bias = norm1_ ? norm1_->bias : layer_norm_ ? layer_norm_->bias : conv2_->bias;
  const std::vector<torch::Tensor> wn = normed ? norm_weight.unbind(0) : std::vector<torch::Tensor>{};
  const std::vector<torch::Tensor> bn = normed ? norm_bias.unbind(0) : std::vector<torch::Tensor>{};
  std::vector<torch::Tensor> features;
  for (std::int64_t p = 0; p < members_; ++p) {
    torch::Tensor h = member_dropout(p, torch::leaky_relu(conv1_->member_forward(images[p], w1[p], b1[p]), kLeakySlope));
    h = conv2_->member_forward(h, w2[p], b2[p]);
    if (norm1_) h = norm1_->member_forward(h, p, wn[p], bn[p]);
    if (layer_norm_) h = layer_norm_->member_forward(h, wn[p], bn[p]);
    features.push_back(member_dropout(p, torch::leaky_relu(h, kLeakySlope)).view({batch, -1}));
  }
  const torch::Tensor h = torch::stack(features);
  return discriminator_output(sn ? linear_->forward_with(h, sn_linear_->forward(linear_->weight)) : linear_->forward(h));
}

torch::Tensor StackedDcganImpl::image_planes(const torch::Tensor& x) const {
  const std::int64_t batch = x.size(1);
  const torch::Tensor image = x.narrow(2, 0, kImageDim).reshape({members_, batch, 1, kImageSide, kImageSide});
  if (!is_conditional(shape_)) return image;
  // conditional_discriminator_forward(): the label as constant planes.
  const torch::Tensor planes = x.narrow(2, kImageDim, kClassCount)
                                   .reshape({members_, batch, kClassCount, 1, 1})
                                   .expand({members_, batch, kClassCount, kImageSide, kImageSide});
  return torch::cat({image, planes}, 2);
}

torch::Tensor StackedDcganImpl::discriminator_output(const torch::Tensor& scores) const {
  if (shape_.d_output == DiscriminatorOutput::kScore) return scores;
  return member_aligned(scores, [](const torch::Tensor& t) { return torch::sigmoid(widened(t)); });
}

torch::Tensor StackedDcganImpl::member_dropout(std::int64_t p, const torch::Tensor& x) {
  if (!is_training() || !drops_out()) return x;
  if (staging_) return x * next_staged_mask(x);
  if (generators_.empty())
    throw std::logic_error("StackedDcgan: a training forward pass with dropout needs set_member_generators() first");
  return cellgan::member_dropout(x, kDropout, true, generators_[static_cast<std::size_t>(p)]);
}

torch::Tensor StackedDcganImpl::dropout(const torch::Tensor& x) {
  if (!is_training()) return x;
  if (staging_) return x * next_staged_mask(x);
  if (generators_.empty())
    throw std::logic_error("StackedDcgan: a training forward pass with dropout needs set_member_generators() first");
  return stacked_dropout(x, kDropout, true, generators_);
}

// The masks as stacked_dropout() and member_dropout() draw them
// (stacked_dropout.h), straight into the slots (member_draws.h).
void StackedDcganImpl::stage_dropout_pass(std::int64_t batch, torch::Device device) {
  if (!drops_out()) return;
  if (generators_.empty())
    throw std::logic_error("StackedDcgan: staging dropout masks needs set_member_generators() first");
  const std::vector<std::vector<std::int64_t>> layers{{batch, kDiscChannels1, 2 * kSeedSide, 2 * kSeedSide},
                                                      {batch, kDiscChannels2, kSeedSide, kSeedSide}};
  if (device.is_cuda()) {  // layer by layer, as dropout() draws: a slot [P, ...] per layer
    for (const auto& sizes : layers) {
      std::vector<std::int64_t> stacked{members_};
      stacked.insert(stacked.end(), sizes.begin(), sizes.end());
      draw_dropout_rows(next_slot(stacked, device), kDropout, generators_);
    }
  } else {  // member by member, as member_dropout() draws: a slot per member and layer
    for (std::size_t p = 0; p < generators_.size(); ++p)
      for (const auto& sizes : layers)
        draw_dropout_rows(next_slot(sizes, device).unsqueeze(0), kDropout, {generators_[p]});
  }
  staging_ = true;
}

// The next slot, made at the first pass that fills it and kept after (made
// anew only for another batch size).
torch::Tensor StackedDcganImpl::next_slot(const std::vector<std::int64_t>& sizes, torch::Device device) {
  const auto made = [&] { return torch::empty(sizes, torch::TensorOptions().dtype(torch::kFloat32).device(device)); };
  if (staged_count_ == staged_.size())
    staged_.push_back(made());
  else if (staged_[staged_count_].sizes() != torch::IntArrayRef(sizes) || staged_[staged_count_].device() != device)
    staged_[staged_count_] = made();
  return staged_[staged_count_++];
}

torch::Tensor StackedDcganImpl::next_staged_mask(const torch::Tensor& x) {
  if (staged_next_ >= staged_count_)
    throw std::logic_error("StackedDcgan: a training pass with no dropout masks staged for it");
  return staged_[staged_next_++].to(x.device(), x.scalar_type());
}

torch::Tensor StackedDcganImpl::discriminate(const torch::Tensor& x) {
  if (!x.is_cuda()) return discriminate_member_by_member(x);
  const std::int64_t batch = x.size(1);
  torch::Tensor h = image_planes(x);
  const bool sn = shape_.kind == NetworkKind::kSngan;
  h = torch::leaky_relu(sn ? conv1_->forward_with(h, sn1_->forward(conv1_->weight)) : conv1_->forward(h), kLeakySlope);
  if (!sn) h = dropout(h);
  h = sn ? conv2_->forward_with(h, sn2_->forward(conv2_->weight)) : conv2_->forward(h);
  if (norm1_) h = norm1_->forward(h);
  if (layer_norm_) h = layer_norm_->forward(h);
  h = torch::leaky_relu(h, kLeakySlope);
  if (!sn) h = dropout(h);
  h = h.reshape({members_, batch, kDiscChannels2 * kSeedSide * kSeedSide});
  return discriminator_output(sn ? linear_->forward_with(h, sn_linear_->forward(linear_->weight))
                                 : linear_->forward(h));
}

std::vector<StackedTensor> StackedDcganImpl::parameter_tensors() const {
  std::vector<StackedTensor> out;
  const auto add = [&out](std::vector<StackedTensor> tensors) {
    for (StackedTensor& t : tensors) out.push_back(std::move(t));
  };
  if (role_ == Role::kGenerator) {
    for (auto tensors : {linear_->tensors(), norm0_->tensors(), conv1_->tensors(), norm1_->tensors(), conv2_->tensors()})
      add(std::move(tensors));
    return out;
  }
  add(conv1_->tensors());
  add(conv2_->tensors());
  if (norm1_) add(norm1_->tensors());
  if (layer_norm_) add(layer_norm_->tensors());
  add(linear_->tensors());
  return out;
}

std::vector<StackedTensor> StackedDcganImpl::buffer_tensors() const {
  std::vector<StackedTensor> out;
  const auto add = [&out](std::vector<StackedTensor> tensors) {
    for (StackedTensor& t : tensors) out.push_back(std::move(t));
  };
  if (role_ == Role::kGenerator) {
    add(norm0_->buffer_tensors());
    add(norm1_->buffer_tensors());
  } else if (sn1_) {
    add(sn1_->buffer_tensors());
    add(sn2_->buffer_tensors());
    add(sn_linear_->buffer_tensors());
  } else if (norm1_) {
    add(norm1_->buffer_tensors());
  }
  return out;
}

}  // namespace cellgan
