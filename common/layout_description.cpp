// What a layout means for those who show its runs (see layout_description.h).
#include "common/layout_description.h"

#include <fmt/format.h>

namespace cellgan {

std::optional<LayoutDescription> LayoutDescription::named(const std::string& name) {
  for (LayoutKind kind : {LayoutKind::kCoevolution, LayoutKind::kDataParallel, LayoutKind::kPerClass})
    if (name == to_string(kind)) return LayoutDescription(kind);
  return std::nullopt;
}

LayoutDescription LayoutDescription::of_run(const std::string& name) {
  return named(name).value_or(LayoutDescription(LayoutKind::kCoevolution));
}

std::string LayoutDescription::unit() const { return kind_ == LayoutKind::kPerClass ? "class" : "cell"; }

std::string LayoutDescription::curve_unit() const {
  return kind_ == LayoutKind::kDataParallel ? "replicas" : unit();
}

std::string LayoutDescription::samples_caption() const {
  return kind_ == LayoutKind::kPerClass ? "samples.png: the generators of every class"
                                        : "samples.png: the best ensemble";
}

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
