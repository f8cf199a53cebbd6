// Worker counts by layout (see layout_rules.h).
#include "common/layout_rules.h"

#include <fmt/core.h>

namespace cellgan {

WorkerRange worker_range(const Config& config) {
  switch (config.layout) {
    case LayoutKind::kCoevolution: {
      const int cells = static_cast<int>(config.grid.rows * config.grid.cols);
      return {cells, cells};
    }
    case LayoutKind::kPerClass: {
      const int classes = static_cast<int>(config.grid.rows);
      return {classes, classes};
    }
    case LayoutKind::kDataParallel:
      if (config.data_parallel.scaling == BatchScaling::kStrong)
        return {static_cast<int>(config.training.batch_size), 0};
      return {0, 0};
  }
  return {};
}

std::string workers_misfit(const Config& config, int workers) {
  const WorkerRange range = worker_range(config);
  if (workers >= 1 && (range.max == 0 || workers <= range.max)) return "";
  const std::string launch =
      range.max == 0 ? "mpirun -np 2 or more" : fmt::format("mpirun -np 2..{}", range.max + 1);
  switch (config.layout) {
    case LayoutKind::kCoevolution:
      return fmt::format("do not fit a {}x{} grid: expected 1..{} ({})", config.grid.rows, config.grid.cols, range.max,
                         launch);
    case LayoutKind::kPerClass:
      return fmt::format("do not fit layout per_class with {} classes: expected 1..{} ({})", config.grid.rows,
                         range.max, launch);
    case LayoutKind::kDataParallel:
      if (range.max == 0) return fmt::format("are too few: expected 1 or more ({})", launch);
      return fmt::format("cannot split training.batch_size {} (data_parallel.scaling strong): expected 1..{} ({})",
                         config.training.batch_size, range.max, launch);
  }
  return "";
}

}  // namespace cellgan
