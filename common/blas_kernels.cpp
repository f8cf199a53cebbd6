// The OpenBLAS kernels cellgan chooses (see blas_kernels.h).
#include "common/blas_kernels.h"

#include <strings.h>

#include <algorithm>
#include <initializer_list>
#include <sstream>
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
  std::istringstream lines{std::string(cpuinfo)};
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key != "flags") continue;
    std::istringstream words(line.substr(colon + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
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
  if (env.restarted || (ours && cpu_runs_coretype(*env.coretype, cpu_flags)))
    return {set ? *env.coretype : "", ours, false};
  const std::string choice = choose_openblas_coretype(cpu_flags);
  // Unset and nothing to choose: OpenBLAS's own pick, as it stands.
  if (!set && choice.empty()) return {"", false, false};
  return {choice, !choice.empty(), true};
}

}  // namespace cellgan
