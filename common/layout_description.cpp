// What a layout means for those who show its runs (see layout_description.h).
#include "common/layout_description.h"

#include <fmt/format.h>

namespace cellgan {

std::optional<LayoutDescription> LayoutDescription::named(const std::string& name) {
  for (LayoutKind kind : {LayoutKind::kCoevolution, LayoutKind::kDataParallel, LayoutKind::kPerClass})
    if (name == to_string(kind)) return LayoutDescription(kind);
  return std::nullopt;
}

std::string LayoutDescription::unit() const { return kind_ == LayoutKind::kPerClass ? "class" : "cell"; }

std::string LayoutDescription::preview_title(std::int64_t generation, int cell) const {
  if (one_record_per_generation()) return fmt::format("generation {}", generation);
  return fmt::format("generation {}, {} {}", generation, unit(), cell);
}

std::string LayoutDescription::topology(NeighbourhoodKind neighbourhood) const {
  switch (kind_) {
    case LayoutKind::kCoevolution:
      return to_string(neighbourhood);
    case LayoutKind::kPerClass:
      return "a class a row, no neighbours";
    case LayoutKind::kDataParallel:
      break;
  }
  return "one replicated pair";
}

std::string LayoutDescription::best_label(std::optional<int> cell) const {
  switch (kind_) {
    case LayoutKind::kDataParallel:
      return "the replicas' generator";
    case LayoutKind::kPerClass:
      return cell ? fmt::format("class {}", *cell) : std::string("every class (the conditional mixture)");
    case LayoutKind::kCoevolution:
      break;
  }
  return cell ? fmt::format("cell {}", *cell) : std::string("grid");
}

}  // namespace cellgan
