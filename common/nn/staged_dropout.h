// Dropout masks drawn before a lockstep step instead of in it, so that the
// step draws nothing on the host and can be captured as a CUDA graph
// (cuda_step_graph.h): for a stacked dcgan or dcgan_conditional discriminator
// (StackedDcganImpl::stage_dropout_pass()), the same masks, from the same
// member generators in the same order, as its passes would draw. Networks
// that draw no dropout masks (draws_dropout() false) ignore these calls.
//
// Thread-safety: as the network's.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "common/nn/stacked_networks.h"

namespace cellgan {

// The next stage_dropout_pass() fills the first slots again.
void clear_staged_dropout(StackedNetworkImpl& network);
// Draws the masks of the network's next training pass of `batch` rows on
// `device`; from then on its training passes take staged masks.
void stage_dropout_pass(StackedNetworkImpl& network, std::int64_t batch, torch::Device device);
// The next training pass takes the first staged masks again.
void restart_staged_dropout(StackedNetworkImpl& network);

}  // namespace cellgan
