// Whether a network's weights are drawn when it is made, and putting a
// network made on the CPU on its device.
//
// kDrawn: drawn from Torch's global generator, as LibTorch's layers draw
// them (seed it first for reproducible weights). kUndrawn: for a caller
// that writes every parameter and buffer itself (an individual's copies,
// a stack whose rows are all loaded): nothing is drawn and the weights
// hold no values (layers.h; on the CPU the norms' ones and zeros are still
// filled in, on a GPU every parameter and buffer gets empty storage).
//
// Thread-safety: a module belongs to one thread at a time.
#pragma once

#include <c10/core/Device.h>

namespace torch::nn {
class Module;
}

namespace cellgan {

enum class InitialWeights { kDrawn, kUndrawn };

// Moves `module`'s parameters and buffers to `device`: with `values` they
// are copied there (from the host, each a wait for the device); without,
// they get empty storage there, for a caller that writes every one. Those
// already there stay as they are.
void place_on_device(torch::nn::Module& module, const c10::Device& device, bool values);

}  // namespace cellgan
