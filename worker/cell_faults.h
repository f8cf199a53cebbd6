// What the injected faults (fault_injector.h) do to one cell's generation:
// the input the cell trainer (cell_trainer.h) takes besides the cell's
// state and its neighbours. The default is no fault.
//
// Thread-safety: a plain value type.
#pragma once

#include <chrono>

namespace cellgan {

struct CellFaults {
  // At the start of the generation, every local generator's weights become
  // NaN (fault `nan`); the trainer then discards them (docs/operations.md, "Faults: what is survived").
  bool poison_generators = false;
  // Added to every training batch (fault `delay`); changes no result.
  std::chrono::milliseconds batch_delay{0};
};

}  // namespace cellgan
