// The training data of a run as one float32 tensor [N, data_dim], in the
// range the networks produce: images in [-1, 1] (flat 784), toy mixtures as
// 2-D points generated from (seed, toy stream).
//
// Throws InputError (from the dataset readers) when data is missing.
// Thread-safety: pure function.
#pragma once

#include <torch/types.h>

#include "common/config.h"

namespace cellgan {

torch::Tensor load_training_tensor(const Config& config);

}  // namespace cellgan
