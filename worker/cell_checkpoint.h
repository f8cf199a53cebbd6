// A cell's state as bytes, for checkpoints (common/checkpoint_store.h):
// everything CellState holds — the local individuals with their Adam state,
// learning rate and bookkeeping, the neighbour generators of the mixture,
// the mixture weights and objective — so that a cell decoded from them
// trains on exactly as the one encoded would have. Random draws are
// re-derived from (seed, cell, generation) each generation (cell_trainer.h),
// so no random state is stored.
//
// The bytes carry no checksum of their own: the checkpoint store checks
// each file's CRC-32. Errors: decode throws InputError (naming `what`) on
// bytes that are not a cell state, are truncated, or belong to another
// network shape.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "common/comm/communicator.h"
#include "common/config.h"
#include "worker/cell_state.h"

namespace cellgan {

Bytes encode_cell_state(const CellState& state);
CellState decode_cell_state(const Bytes& bytes, const Config& config, const std::string& what,
                            torch::Device device = torch::kCPU);

}  // namespace cellgan
