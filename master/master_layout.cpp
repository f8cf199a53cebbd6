// Choosing the master half of a layout (see master_layout.h).
#include "master/master_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "common/log.h"
#include "common/nn/ensemble.h"
#include "master/coevolution_results.h"
#include "master/data_parallel_results.h"
#include "master/final_ensemble.h"
#include "master/per_class_results.h"
#include "master/run_directory.h"

namespace cellgan {

std::vector<int> owners_of(const Partition& partition) {
  std::vector<int> owners;
  for (const int owner : partition.owner) owners.push_back(owner + 1);
  return owners;
}

std::unique_ptr<MasterLayout> make_master_layout(const Config& config, int workers) {
  switch (config.layout) {
    case LayoutKind::kCoevolution: return std::make_unique<CoevolutionResults>(config, workers);
    case LayoutKind::kDataParallel: return std::make_unique<DataParallelResults>(config, workers);
    case LayoutKind::kPerClass: return std::make_unique<PerClassResults>(config, workers);
  }
  throw std::logic_error("unknown layout");
}

std::vector<Ensemble> gather_finite_ensembles(std::vector<ResultMessage>& results, const FinishContext& context,
                                              const std::string& what) {
  std::vector<Ensemble> ensembles;
  for (std::size_t w = 0; w < results.size(); ++w) {
    for (Bytes& bytes : results[w].ensembles)
      ensembles.push_back(Ensemble::decode(bytes, fmt::format("result {} of {}", w + 1, results.size()),
                                           torch::Device(context.master_device)));
    results[w].ensembles.clear();
  }
  std::sort(ensembles.begin(), ensembles.end(), [](const Ensemble& a, const Ensemble& b) { return a.cell < b.cell; });
  context.run.event(fmt::format("gathered {} {}", ensembles.size(), what));
  for (const std::string& line : drop_non_finite_generators(ensembles)) {
    log::warn("{}", line);
    context.run.event(line);
  }
  return ensembles;
}

}  // namespace cellgan
