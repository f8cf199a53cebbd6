// Dropout masks drawn before a step (staged_dropout.h).
#include "common/nn/staged_dropout.h"

#include <torch/torch.h>

#include <memory>

#include "common/nn/stacked_dcgan.h"

namespace cellgan {
namespace {

// The network's convolutional layers when it draws dropout masks, else null.
StackedDcganImpl* masked_layers(StackedNetworkImpl& network) {
  if (!network.draws_dropout()) return nullptr;
  for (const std::shared_ptr<torch::nn::Module>& child : network.children())
    if (auto* layers = dynamic_cast<StackedDcganImpl*>(child.get())) return layers;
  return nullptr;
}

}  // namespace

void clear_staged_dropout(StackedNetworkImpl& network) {
  if (StackedDcganImpl* layers = masked_layers(network)) layers->clear_staged_dropout();
}

void stage_dropout_pass(StackedNetworkImpl& network, std::int64_t batch, torch::Device device) {
  if (StackedDcganImpl* layers = masked_layers(network)) layers->stage_dropout_pass(batch, device);
}

void restart_staged_dropout(StackedNetworkImpl& network) {
  if (StackedDcganImpl* layers = masked_layers(network)) layers->restart_staged_dropout();
}

}  // namespace cellgan
