// What one generation of one cell did: the typed record a worker sends
// the master each generation (protocol.h) and the master writes as one
// line of metrics.jsonl. Plain values, no Torch.
//
// Thread-safety: a plain value type.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cellgan {

struct GenerationRecord {
  int cell = 0;
  std::int64_t generation = 0;            // 1-based: the generation just completed
  double generator_loss = 0.0;            // best local G fitness
  double discriminator_loss = 0.0;        // best local D fitness
  std::map<std::string, double> scores;   // of the mixture (fid, tvd, ...)
  std::vector<double> generator_lrs;
  std::vector<double> discriminator_lrs;
  std::vector<double> mixture_weights;
  int generators_replaced = 0;
  int discriminators_replaced = 0;
  bool mixture_improved = false;
  // On preview generations (evaluation.preview_every), the first samples
  // the kept mixture was scored on, row-major (n x 784 or n x 2); else
  // empty. Not part of metrics.jsonl.
  std::vector<float> preview;
  // Seconds per phase; for coevolution exactly these seven keys
  // (worker/cell_trainer.h; data_parallel's are in data_parallel_layout.h):
  //   gather    reading the neighbours' centres
  //   select    the tournaments, cloning the winners
  //   train     the Adam steps of the selected copies, mutation excluded
  //   mutate    the learning-rate mutations before the steps
  //   replace   choosing and moving the replaced individuals
  //   evaluate  fitness, scoring the trained copies, the mixture ES
  //   idle      the worker's wait for its neighbours' halos
  std::map<std::string, double> seconds;
  // Other measures of the generation, by name, when the layout has any
  // (data_parallel: "allreduce_bytes_per_step", "allreduce_messages_per_step",
  // "images_per_second"); empty for coevolution.
  std::map<std::string, double> counts;
  // Lines for events.log: the faults injected in this generation and what
  // the cell did about non-finite individuals (docs/operations.md, "Faults: what is survived"), in the order they
  // happened; usually empty. The master writes them when the generation is
  // complete, in cell order. Not part of metrics.jsonl.
  std::vector<std::string> events;
};

}  // namespace cellgan
