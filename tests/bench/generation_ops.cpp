// bench_generation_ops: how many kernels one generation of a whole grid
// launches, part by part (the cellgan::* scopes of worker/cell_trainer.h),
// with every cell in one worker's CellBlock and the cells begun together
// as on a GPU. Where steps are not captured as CUDA graphs every kernel is
// a launch of a few microseconds there, so the counts bound a generation's
// launch time; on the CPU some operators take several kernels where a GPU
// takes one (a batched product is one per member), so the CPU's counts
// are an upper bound of the GPU's.
//
// Usage: bench_generation_ops CONFIG [--set key=value ...] [--generations N] [--names K]
// Runs N generations (default 2) and prints, for the last one, the kernels
// per part (operators that are not views and under which no other kernel
// ran; a batched product counts once; `aten::_local_scalar_dense` is a host
// wait), and the K (default 8) most called per part.
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/nn/device.h"
#include "common/nn/scores.h"
#include "common/nn/training_data.h"
#include "grid/topology.h"
#include "worker/cell_block.h"

namespace {

using namespace cellgan;

std::mutex g_mutex;
// The cellgan::* scopes open, innermost last: one stack for the process,
// as one thread (the block's) opens them; the kernels of a backward pass
// on another thread count against them too.
std::vector<std::string> g_parts;
std::map<std::string, std::map<std::string, long>> g_counts;  // part -> operator -> kernels
// The operators open on this thread: whether a kernel ran under each,
// whether it is one kernel on a GPU, and whether such a one is open above it.
struct Open {
  bool kernel_below = false;
  bool whole = false;
  bool inside_whole = false;
};
thread_local std::vector<Open> t_open;

// Operators that only make a new view of a tensor, or allocate one: no kernel.
bool makes_no_kernel(const std::string& name) {
  static const std::set<std::string> names = {
      "aten::view", "aten::reshape", "aten::_reshape_alias", "aten::detach", "aten::detach_", "aten::select",
      "aten::narrow", "aten::slice", "aten::t", "aten::transpose", "aten::flatten", "aten::unsqueeze",
      "aten::squeeze", "aten::expand", "aten::permute", "aten::as_strided", "aten::alias", "aten::empty",
      "aten::empty_like", "aten::empty_strided", "aten::unbind", "aten::split", "aten::chunk", "aten::to",
      "aten::lift_fresh", "aten::resize_", "aten::set_", "aten::_unsafe_view", "aten::unflatten",
      "aten::contiguous", "aten::expand_as", "aten::view_as", "aten::result_type", "aten::is_nonzero",
      "aten::size", "aten::stride", "aten::is_same_size", "aten::resolve_conj", "aten::resolve_neg",
      "aten::_conj", "aten::conj", "aten::_neg_view", "aten::type_as", "aten::_has_compatible_shallow_copy_type"};
  return names.count(name) > 0;
}

// One kernel on a GPU, whatever the CPU runs under them.
bool one_kernel(const std::string& name) {
  static const std::set<std::string> names = {"aten::bmm", "aten::baddbmm", "aten::mm", "aten::addmm"};
  return names.count(name) > 0;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  const std::string name = fn.name();
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    if (name.rfind("cellgan::", 0) == 0) {
      const std::lock_guard<std::mutex> lock(g_mutex);
      g_parts.push_back(name.substr(9));
    }
    return nullptr;
  }
  const bool inside = !t_open.empty() && (t_open.back().whole || t_open.back().inside_whole);
  t_open.push_back({false, one_kernel(name), inside});
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  const std::string name = fn.name();
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    if (name.rfind("cellgan::", 0) == 0) {
      const std::lock_guard<std::mutex> lock(g_mutex);
      if (!g_parts.empty()) g_parts.pop_back();
    }
    return;
  }
  const Open open = t_open.back();
  t_open.pop_back();
  const bool kernel = !open.inside_whole && (open.whole || !open.kernel_below) && name.rfind("aten::", 0) == 0 &&
                      !makes_no_kernel(name);
  if (!t_open.empty() && (kernel || open.kernel_below)) t_open.back().kernel_below = true;
  if (!kernel) return;
  const std::lock_guard<std::mutex> lock(g_mutex);
  ++g_counts[g_parts.empty() ? "(outside the parts)" : g_parts.back()][name];
}

long total(const std::map<std::string, long>& by_name) {
  long n = 0;
  for (const auto& [name, count] : by_name) n += count;
  return n;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_generation_ops CONFIG [--set key=value ...] [--generations N] [--names K]\n");
    return 2;
  }
  std::vector<std::string> settings;
  int generations = 2;
  std::size_t names_shown = 8;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--set" && i + 1 < argc)
      settings.push_back(argv[++i]);
    else if (arg == "--generations" && i + 1 < argc)
      generations = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--names" && i + 1 < argc)
      names_shown = static_cast<std::size_t>(std::max(0, std::stoi(argv[++i])));
    else
      throw std::invalid_argument("unknown argument " + arg);
  }
  torch::set_num_threads(1);
  const Config config = load_config(argv[1], settings);
  const TrainingData data(config, resolve_device(config.runtime.device));
  std::unique_ptr<SampleScorer> scorer = make_scorer(config, data.device());
  const GridShape grid(config.grid.rows, config.grid.cols);
  std::vector<int> cells(static_cast<std::size_t>(grid.cell_count()));
  std::iota(cells.begin(), cells.end(), 0);
  CellBlock block(config, grid, cells, data, *scorer);
  if (!data.device().is_cuda()) block.set_cells_per_game(cells.size());  // as a GPU groups the MLP kinds
  for (int g = 0; g < generations; ++g) {
    const bool last = g == generations - 1;
    at::CallbackHandle handle = 0;
    if (last)
      handle = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                                         .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                                  at::RecordScope::USER_SCOPE}));
    block.run_generation({});
    if (last) at::removeCallback(handle);
  }
  const TrainingConfig& t = config.training;
  std::printf("%s on %s: %d cells begun %zu together, population %ld, %ld batches of %ld; kernels of generation %d\n",
              argv[1], data.device().str().c_str(), grid.cell_count(), block.cells_per_game(),
              static_cast<long>(t.population_size), static_cast<long>(t.batches_per_generation),
              static_cast<long>(t.batch_size), generations);
  long all = 0;
  for (const auto& [part, by_name] : g_counts) all += total(by_name);
  std::printf("%-20s %8ld\n", "all", all);
  for (const auto& [part, by_name] : g_counts) {
    std::vector<std::pair<long, std::string>> top;
    for (const auto& [name, count] : by_name) top.push_back({count, name});
    std::sort(top.rbegin(), top.rend());
    top.resize(std::min(top.size(), names_shown));
    std::string names;
    for (const auto& [count, name] : top) names += fmt::format(" {} {},", name.substr(6), count);
    std::printf("%-20s %8ld %s\n", part.c_str(), total(by_name), names.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_generation_ops: %s\n", e.what());
    return 1;
  }
}
