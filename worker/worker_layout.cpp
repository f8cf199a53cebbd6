// Choosing the worker half of a layout (see worker_layout.h).
#include "worker/worker_layout.h"

#include <stdexcept>

#include "worker/coevolution_layout.h"
#include "worker/data_parallel_layout.h"
#include "worker/per_class_layout.h"

namespace cellgan {

std::unique_ptr<WorkerLayout> make_worker_layout(const Config& config, int workers, c10::Device device) {
  switch (config.layout) {
    case LayoutKind::kCoevolution: return std::make_unique<CoevolutionLayout>(config, workers, device);
    case LayoutKind::kDataParallel: return std::make_unique<DataParallelLayout>(config, workers, device);
    case LayoutKind::kPerClass: return std::make_unique<PerClassLayout>(config, workers, device);
  }
  throw std::logic_error("unknown layout");
}

}  // namespace cellgan
