// Which OpenBLAS kernels cellgan asks for when the user has not chosen.
//
// OpenBLAS picks its kernels by CPU model when it loads, and Debian 12's
// OpenBLAS 0.3.21 falls back to its generic (Prescott) kernels on CPUs newer
// than it, about 5x slower at sgemm. cellgan therefore chooses from the
// CPU's features instead, and sets OPENBLAS_CORETYPE before OpenBLAS loads
// (app/kernel_choice.h does it from the executable's pre-initialisers). A
// OPENBLAS_CORETYPE the user set always wins.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace cellgan {

// The CPU's feature flags as the first "flags" line of /proc/cpuinfo lists
// them ("avx2", "avx512f", ...); empty when `cpuinfo` has none. Linux lists
// only the features the kernel lets programs use (AVX-512 state saved).
std::set<std::string> cpu_flags_from_cpuinfo(std::string_view cpuinfo);

// The OPENBLAS_CORETYPE with the fastest sgemm that OpenBLAS 0.3.21 knows and
// the CPU can run: "SkylakeX" (avx512f, cd, bw, dq, vl; Cooperlake's sgemm is
// the same), "Haswell" (avx2, fma), "Sandybridge" (avx); "" below AVX, where
// OpenBLAS's own pick is as good.
std::string choose_openblas_coretype(const std::set<std::string>& cpu_flags);

// True when `coretype` is one of choose_openblas_coretype's names (any
// case, as OpenBLAS reads it) and the CPU has the features its kernels use.
bool cpu_runs_coretype(std::string_view coretype, const std::set<std::string>& cpu_flags);

// What the program finds at start.
struct BlasEnvironment {
  std::optional<std::string> coretype;  // OPENBLAS_CORETYPE (an empty one counts as unset)
  std::optional<std::string> chosen;    // CELLGAN_BLAS_CHOSEN: the coretype cellgan set
};

// What to do about it.
struct BlasPlan {
  std::string coretype;    // OPENBLAS_CORETYPE from now on; "" for unset (OpenBLAS's own pick)
  bool automatic = false;  // cellgan chose `coretype`, not the user
  bool set_variables = false;  // set OPENBLAS_CORETYPE to `coretype` (and CELLGAN_BLAS_CHOSEN), before OpenBLAS loads
};

// - The user's OPENBLAS_CORETYPE (set, and not cellgan's own): kept.
// - cellgan's own choice, inherited from a launcher: kept when this CPU
//   runs it, else replaced by this CPU's choice (a node of another kind).
// - None: this CPU's choice; nothing when there is none.
BlasPlan plan_blas_kernels(const std::set<std::string>& cpu_flags, const BlasEnvironment& env);

}  // namespace cellgan
