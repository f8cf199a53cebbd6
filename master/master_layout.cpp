// Choosing the master half of a layout (see master_layout.h).
#include "master/master_layout.h"

#include <stdexcept>

#include "master/coevolution_results.h"
#include "master/data_parallel_results.h"
#include "master/per_class_results.h"

namespace cellgan {

std::unique_ptr<MasterLayout> make_master_layout(const Config& config, int workers) {
  switch (config.layout) {
    case LayoutKind::kCoevolution: return std::make_unique<CoevolutionResults>(config, workers);
    case LayoutKind::kDataParallel: return std::make_unique<DataParallelResults>(config, workers);
    case LayoutKind::kPerClass: return std::make_unique<PerClassResults>(config, workers);
  }
  throw std::logic_error("unknown layout");
}

}  // namespace cellgan
