// An ensemble as a file that Python's torch.load reads (cellgan export;
// python/cellgan_ensemble.py rebuilds the generators from it and samples
// them as cellgan sample does).
//
// The file is the zip archive torch.save writes, holding one dict:
//   format "cellgan-ensemble", version 1,
//   kind (network.kind: mlp, dcgan, sngan, toy, dcgan_conditional),
//   latent_dim, data_dim (the generator's input and output widths, label
//   slots included), sample_dim (the columns of a sample), toy_hidden,
//   toy_layers, label_slots (10 for dcgan_conditional, else 0), cell,
//   weights: float64 [G], the mixture weights,
//   generators: G dicts {name: tensor}, each generator's parameters and
//     buffers as its module names them ("body.0.weight", ...),
//   classes: None, or for a per_class run {"proportions": float64 [K],
//     "generators": int64 [K, 2] (first generator, count) per class}.
// Numbers that are not integers travel as tensors, and the archive names no
// Python global other than torch's tensor and storage rebuilders: it loads
// with torch.load(path, weights_only=True) from PyTorch 1.13 on (LibTorch's
// torch::pickle_save would add TorchScript type tags that a weights-only
// load refuses).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <vector>

#include "common/nn/class_generator.h"
#include "common/nn/ensemble.h"

namespace cellgan {

inline constexpr const char* kExportFormat = "cellgan-ensemble";
inline constexpr std::int64_t kExportVersion = 1;

// The file's bytes for an ensemble; with `classes`, for the conditional
// generator of a per_class run (its mixture, and its class index).
std::vector<char> export_ensemble(Ensemble& ensemble);
std::vector<char> export_ensemble(ClassGenerator& classes);

}  // namespace cellgan
