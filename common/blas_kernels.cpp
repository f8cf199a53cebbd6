// The OpenBLAS kernels cellgan chooses (see blas_kernels.h).
#include "common/blas_kernels.h"

#include <strings.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace cellgan {
namespace {

struct Coretype {
  const char* name;
  std::vector<std::string> flags;  // what its kernels use
};

// Fastest first. Measured with bench_gemm_limit (docs/results.md, K1).
const std::vector<Coretype>& coretypes() {
  static const std::vector<Coretype> list = {
      {"SkylakeX", {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"}},
      {"Haswell", {"avx2", "fma", "avx"}},
      {"Sandybridge", {"avx"}},
  };
  return list;
}

bool has_all(const std::set<std::string>& flags, const std::vector<std::string>& needed) {
  return std::all_of(needed.begin(), needed.end(), [&](const std::string& f) { return flags.count(f) > 0; });
}

}  // namespace

std::set<std::string> cpu_flags_from_cpuinfo(std::string_view cpuinfo) {
  // Plain string scanning, no streams: this runs before the C++ library's
  // own initialisers (app/kernel_choice.h).
  constexpr std::string_view kBlanks = " \t";
  while (!cpuinfo.empty()) {
    const std::size_t end = cpuinfo.find('\n');
    const std::string_view line = cpuinfo.substr(0, end);
    cpuinfo = end == std::string_view::npos ? std::string_view() : cpuinfo.substr(end + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    key = key.substr(0, key.find_last_not_of(kBlanks) + 1);
    if (key != "flags") continue;
    std::set<std::string> flags;
    std::string_view rest = line.substr(colon + 1);
    while (true) {
      const std::size_t from = rest.find_first_not_of(kBlanks);
      if (from == std::string_view::npos) break;
      rest = rest.substr(from);
      const std::size_t to = std::min(rest.find_first_of(kBlanks), rest.size());
      flags.emplace(rest.substr(0, to));
      rest = rest.substr(to);
    }
    return flags;
  }
  return {};
}

std::string choose_openblas_coretype(const std::set<std::string>& cpu_flags) {
  for (const Coretype& c : coretypes())
    if (has_all(cpu_flags, c.flags)) return c.name;
  return "";
}

bool cpu_runs_coretype(std::string_view coretype, const std::set<std::string>& cpu_flags) {
  const std::string name(coretype);
  for (const Coretype& c : coretypes())
    if (strcasecmp(name.c_str(), c.name) == 0) return has_all(cpu_flags, c.flags);
  return false;
}

BlasPlan plan_blas_kernels(const std::set<std::string>& cpu_flags, const BlasEnvironment& env) {
  const bool set = env.coretype.has_value() && !env.coretype->empty();
  const bool ours = set && env.chosen.has_value() && *env.chosen == *env.coretype;
  if (set && !ours) return {*env.coretype, false, false};
  if (ours && cpu_runs_coretype(*env.coretype, cpu_flags))
    return {set ? *env.coretype : "", ours, false};
  const std::string choice = choose_openblas_coretype(cpu_flags);
  // Unset and nothing to choose: OpenBLAS's own pick, as it stands.
  if (!set && choice.empty()) return {"", false, false};
  return {choice, !choice.empty(), true};
}

}  // namespace cellgan
