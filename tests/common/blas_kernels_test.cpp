// The OpenBLAS kernels cellgan chooses from the CPU's features.
#include "common/blas_kernels.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace cellgan {
namespace {

using Flags = std::set<std::string>;

const Flags kSse = {"fpu", "sse", "sse2", "ssse3", "sse4_1", "sse4_2", "popcnt"};
const Flags kSandyBridge = [] { Flags f = kSse; f.insert({"avx", "xsave"}); return f; }();
const Flags kHaswell = [] { Flags f = kSandyBridge; f.insert({"avx2", "fma", "bmi2"}); return f; }();
const Flags kSkylakeX = [] {
  Flags f = kHaswell;
  f.insert({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"});
  return f;
}();
// A current Xeon (Sapphire Rapids), which OpenBLAS 0.3.21 does not know.
const Flags kSapphireRapids = [] {
  Flags f = kSkylakeX;
  f.insert({"avx512_bf16", "avx512_fp16", "avx512_vnni", "amx_tile"});
  return f;
}();

TEST(ChooseOpenblasCoretype, TheFastestKernelsTheCpuRuns) {
  EXPECT_EQ(choose_openblas_coretype(kSapphireRapids), "SkylakeX");
  EXPECT_EQ(choose_openblas_coretype(kSkylakeX), "SkylakeX");
  EXPECT_EQ(choose_openblas_coretype(kHaswell), "Haswell");
  EXPECT_EQ(choose_openblas_coretype(kSandyBridge), "Sandybridge");
  EXPECT_EQ(choose_openblas_coretype(kSse), "");
  EXPECT_EQ(choose_openblas_coretype({}), "");
}

TEST(ChooseOpenblasCoretype, EveryFeatureTheKernelsUseIsNeeded) {
  // Xeon Phi (Knights Landing): AVX-512F and CD, not BW, DQ or VL.
  Flags knights = kHaswell;
  knights.insert({"avx512f", "avx512cd", "avx512er", "avx512pf"});
  EXPECT_EQ(choose_openblas_coretype(knights), "Haswell");
  Flags no_fma = kHaswell;
  no_fma.erase("fma");
  EXPECT_EQ(choose_openblas_coretype(no_fma), "Sandybridge");
  Flags no_vl = kSkylakeX;
  no_vl.erase("avx512vl");
  EXPECT_EQ(choose_openblas_coretype(no_vl), "Haswell");
}

TEST(CpuRunsCoretype, ByNameInAnyCase) {
  EXPECT_TRUE(cpu_runs_coretype("SkylakeX", kSkylakeX));
  EXPECT_TRUE(cpu_runs_coretype("skylakex", kSkylakeX));
  EXPECT_TRUE(cpu_runs_coretype("Haswell", kSkylakeX));
  EXPECT_FALSE(cpu_runs_coretype("SkylakeX", kHaswell));
  EXPECT_FALSE(cpu_runs_coretype("Sandybridge", kSse));
  EXPECT_FALSE(cpu_runs_coretype("Zen", kSkylakeX));  // not one of cellgan's names
}

TEST(CpuFlagsFromCpuinfo, TheFirstFlagsLine) {
  const std::string cpuinfo =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\n"
      "flags\t\t: fpu sse avx avx2 fma avx512f\nbugs\t\t: sysret_ss_attrs\n\n"
      "processor\t: 1\nflags\t\t: fpu sse\n";
  EXPECT_EQ(cpu_flags_from_cpuinfo(cpuinfo), (Flags{"fpu", "sse", "avx", "avx2", "fma", "avx512f"}));
  EXPECT_EQ(cpu_flags_from_cpuinfo("processor\t: 0\n"), Flags{});
  // Not "vmx flags" (a line of its own on Intel CPUs) nor "flagsx".
  EXPECT_EQ(cpu_flags_from_cpuinfo("vmx flags\t: ept vpid\nflags\t\t: avx\n"), Flags{"avx"});
}

TEST(PlanBlasKernels, TheUsersCoretypeAlwaysWins) {
  const BlasPlan plan = plan_blas_kernels(kSkylakeX, {std::string("Prescott"), std::nullopt});
  EXPECT_EQ(plan.coretype, "Prescott");
  EXPECT_FALSE(plan.automatic);
  EXPECT_FALSE(plan.set_variables);
  // Even one the CPU cannot run, and one that a launcher's choice left behind.
  EXPECT_FALSE(plan_blas_kernels(kHaswell, {std::string("SkylakeX"), std::nullopt}).set_variables);
  EXPECT_FALSE(plan_blas_kernels(kSkylakeX, {std::string("Haswell"), std::string("SkylakeX")}).set_variables);
}

TEST(PlanBlasKernels, UnsetMeansTheCpusChoice) {
  const BlasPlan plan = plan_blas_kernels(kSapphireRapids, {std::nullopt, std::nullopt});
  EXPECT_EQ(plan.coretype, "SkylakeX");
  EXPECT_TRUE(plan.automatic);
  EXPECT_TRUE(plan.set_variables);
  // An empty OPENBLAS_CORETYPE chooses nothing (OpenBLAS ignores it).
  EXPECT_TRUE(plan_blas_kernels(kHaswell, {std::string(""), std::nullopt}).set_variables);
  // Nothing to choose: the variables left as they are, OpenBLAS's own pick.
  const BlasPlan none = plan_blas_kernels(kSse, {std::nullopt, std::nullopt});
  EXPECT_EQ(none.coretype, "");
  EXPECT_FALSE(none.automatic);
  EXPECT_FALSE(none.set_variables);
}

TEST(PlanBlasKernels, ALaunchersChoiceIsKeptWhereTheCpuRunsIt) {
  // A rank the launcher started on a CPU like its own: the variables left as they are.
  const BlasPlan same = plan_blas_kernels(kSkylakeX, {std::string("SkylakeX"), std::string("SkylakeX")});
  EXPECT_EQ(same.coretype, "SkylakeX");
  EXPECT_TRUE(same.automatic);
  EXPECT_FALSE(same.set_variables);
  // Another node without AVX-512: its own choice, not kernels it cannot run.
  const BlasPlan other = plan_blas_kernels(kHaswell, {std::string("SkylakeX"), std::string("SkylakeX")});
  EXPECT_EQ(other.coretype, "Haswell");
  EXPECT_TRUE(other.set_variables);
  // And without AVX: back to OpenBLAS's own pick.
  const BlasPlan old = plan_blas_kernels(kSse, {std::string("Haswell"), std::string("Haswell")});
  EXPECT_EQ(old.coretype, "");
  EXPECT_FALSE(old.automatic);
  EXPECT_TRUE(old.set_variables);
}

}  // namespace
}  // namespace cellgan
