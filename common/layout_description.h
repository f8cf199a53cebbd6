// What a layout (configuration.md, `layout`) means for the parts that show
// or measure its runs without running it: the master's progress lines,
// previews and result files (through MasterLayout::description()), and,
// from the name in run.json (of_run), report.html, the live page and the
// sweep's timing figures. The word for what a grid position holds and for
// a curve's line, a preview's title, the samples' caption, the grid's
// topology in words, the best result's name, and how timing records share
// the workers. The one place that maps a layout to these words.
//
// A value; no Torch, no MPI, so the sweep uses it without linking the
// master. Thread-safety: immutable, any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/config.h"

namespace cellgan {

class LayoutDescription {
 public:
  explicit LayoutDescription(LayoutKind kind) : kind_(kind) {}
  // The layout of configuration name `name` ("coevolution", "data_parallel",
  // "per_class", as run.json and result.json hold it); nullopt for any other.
  static std::optional<LayoutDescription> named(const std::string& name);
  // The layout a run's run.json names, for those that have only the name
  // (the report of a finished run, the live page, the sweep): coevolution
  // for a name it does not know (a run.json from before layouts).
  static LayoutDescription of_run(const std::string& name);

  LayoutKind kind() const { return kind_; }
  // "class" (per_class: a class a row) or "cell".
  std::string unit() const;
  // The word the curves name a line by: unit(), but "replicas" for
  // data_parallel, whose one line is the replicas' pair.
  std::string curve_unit() const;
  // The caption of a run's samples.png: "samples.png: the generators of
  // every class" (per_class) or "samples.png: the best ensemble".
  std::string samples_caption() const;
  // data_parallel: one record a generation (the replicas' pair), so a
  // generation's preview and timing are the pair's, not a cell's.
  bool one_record_per_generation() const { return kind_ == LayoutKind::kDataParallel; }
  // The title of generation `generation`'s preview, drawn from `cell`'s
  // samples: "generation 5" (one record a generation), else
  // "generation 5, cell 3" or "generation 5, class 3".
  std::string preview_title(std::int64_t generation, int cell) const;
  // The grid's topology in words: coevolution its `neighbourhood`'s name;
  // per_class "a class a row, no neighbours"; data_parallel "one replicated pair".
  std::string topology(NeighbourhoodKind neighbourhood) const;
  // The best result as the layout names it, `cell` or, nullopt, the whole
  // grid's: coevolution "cell 3" or "grid"; data_parallel "the replicas'
  // generator"; per_class "class 3" or "every class (the conditional mixture)".
  std::string best_label(std::optional<int> cell) const;
  // By how many workers a generation's timing records are to be divided
  // for the seconds a generation takes: 1 for data_parallel (its one record
  // is the replicas' wall time already), else `workers`.
  int timing_sharers(int workers) const { return one_record_per_generation() ? 1 : workers; }

 private:
  LayoutKind kind_;
};

}  // namespace cellgan
