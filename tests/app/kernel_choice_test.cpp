// The executable on the OpenBLAS kernels it chooses (app/kernel_choice.h):
// with OPENBLAS_CORETYPE unset it re-executes itself before any library's
// constructor, so OpenBLAS loads once, with this CPU's choice
// (common/blas_kernels.h); cellgan says so once and records it; a launcher's
// ranks take its choice without re-executing; the user's choice is kept.
// OPENBLAS_VERBOSE=2 makes OpenBLAS print "Core: NAME" at each load.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "common/blas_kernels.h"
#include "common/error.h"
#include "tests/app/job_files.h"

namespace cellgan {
namespace {

using test::read_bytes;
using test::TempDir;
using test::toy_config;

struct Ran {
  int code = -1;
  std::string out, err;
};

Ran run(const TempDir& tmp, const std::string& command) {
  const std::string out = tmp.file("stdout"), err = tmp.file("stderr");
  const int status = std::system(fmt::format("{} > {} 2> {}", command, out, err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_bytes(out), read_bytes(err)};
}

// What the executable should choose on this CPU.
std::string this_cpus_choice() {
  return choose_openblas_coretype(cpu_flags_from_cpuinfo(read_bytes("/proc/cpuinfo")));
}

// The kernels of each OpenBLAS load, in order.
std::vector<std::string> loads(const std::string& err) {
  std::vector<std::string> cores;
  const std::regex core("^Core: (\\S+)$", std::regex::multiline);
  for (auto it = std::sregex_iterator(err.begin(), err.end(), core); it != std::sregex_iterator(); ++it)
    cores.push_back((*it)[1]);
  return cores;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Both of result.json's records of the kernels: the master's, then the workers'.
std::vector<std::string> recorded(const std::string& dir) {
  const auto j = nlohmann::json::parse(read_bytes(dir + "/result.json"))["blas_kernels"];
  std::vector<std::string> kernels{j["master"].get<std::string>()};
  for (const auto& w : j["workers"]) kernels.push_back(w.get<std::string>());
  return kernels;
}

const std::string kUnset = "env -u OPENBLAS_CORETYPE -u CELLGAN_BLAS_CHOSEN OPENBLAS_VERBOSE=2 OMP_NUM_THREADS=1 ";
const std::string kPrescott = "env -u CELLGAN_BLAS_CHOSEN OPENBLAS_CORETYPE=Prescott OPENBLAS_VERBOSE=2 OMP_NUM_THREADS=1 ";
const std::string kExe = CELLGAN_EXECUTABLE;
const std::string kMpirun =
    fmt::format("{} {} --oversubscribe --bind-to none", CELLGAN_MPIEXEC, ::geteuid() == 0 ? "--allow-run-as-root" : "");

TEST(KernelChoice, UnsetMeansOneLoadWithThisCpusChoiceAndTheUsersChoiceIsKept) {
  TempDir tmp;
  const std::string choice = this_cpus_choice();
  const Ran help = run(tmp, kUnset + kExe + " --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(count(help.out, "usage: cellgan"), 1);
  const std::vector<std::string> cores = loads(help.err);
  ASSERT_EQ(cores.size(), 1u) << help.err;
  if (!choice.empty()) {
    EXPECT_EQ(cores[0], choice);
  }
  EXPECT_EQ(loads(run(tmp, kPrescott + kExe + " --help").err), std::vector<std::string>{"Prescott"});
  // Started through the loader, the program cannot re-execute itself: it goes on, and says so.
  const std::string loader = "/lib64/ld-linux-x86-64.so.2";
  if (!choice.empty() && std::filesystem::exists(loader)) {
    const Ran by_loader = run(tmp, kUnset + loader + " " + kExe + " --help");
    EXPECT_EQ(by_loader.code, 0) << by_loader.err;
    EXPECT_EQ(count(by_loader.out, "usage: cellgan"), 1);
    EXPECT_EQ(loads(by_loader.err).size(), 1u) << by_loader.err;
    EXPECT_EQ(count(by_loader.err, "WARN  -/main blas: started through the loader"), 1) << by_loader.err;
  }
  // A refusal is still one line and exit 2.
  const Ran bad = run(tmp, "env -u OPENBLAS_CORETYPE " + kExe + " trian");
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_EQ(count(bad.err, "\n"), 1) << bad.err;
}

TEST(KernelChoice, MpirunsRanksChooseOnceEachAndRank0SaysIt) {
  TempDir tmp;
  const std::string choice = this_cpus_choice();
  const std::string dir = tmp.file("run");
  const Ran job = run(tmp, fmt::format("{}{} -np 3 {} train {}", kUnset, kMpirun, kExe, toy_config(tmp, "mpirun", dir)));
  ASSERT_EQ(job.code, 0) << job.err;
  EXPECT_EQ(loads(job.err), std::vector<std::string>(3, choice.empty() ? loads(job.err).at(0) : choice)) << job.err;
  EXPECT_EQ(count(job.err, "blas: "), choice.empty() ? 0 : 1) << job.err;
  if (!choice.empty()) {
    EXPECT_EQ(count(job.err, fmt::format("INFO  r0/main blas: OpenBLAS {} kernels, chosen from", choice)), 1) << job.err;
    EXPECT_EQ(recorded(dir), std::vector<std::string>(3, "OpenBLAS " + choice));
  }
}

TEST(KernelChoice, ALaunchersRanksTakeItsChoice) {
  TempDir tmp;
  const std::string choice = this_cpus_choice();
  const std::string dir = tmp.file("auto");
  const Ran job = run(tmp, fmt::format("{}{} launch -w 2 {}", kUnset, kExe, toy_config(tmp, "auto", dir)));
  ASSERT_EQ(job.code, 0) << job.err;
  const std::vector<std::string> cores = loads(job.err);
  EXPECT_EQ(cores.size(), 4u) << job.err;  // the launcher's load, then one per rank
  EXPECT_EQ(count(job.err, "blas: "), choice.empty() ? 0 : 1) << job.err;
  if (!choice.empty()) {
    EXPECT_EQ(cores, std::vector<std::string>(4, choice));
    EXPECT_EQ(count(job.err, fmt::format("cellgan launch: blas: OpenBLAS {} kernels, chosen from", choice)), 1);
    EXPECT_EQ(recorded(dir), std::vector<std::string>(3, "OpenBLAS " + choice));
  }
  // The user's choice reaches every rank, and nothing is said.
  const std::string pinned = tmp.file("pinned");
  const Ran user = run(tmp, fmt::format("{}{} launch -w 2 {}", kPrescott, kExe, toy_config(tmp, "pinned", pinned)));
  ASSERT_EQ(user.code, 0) << user.err;
  EXPECT_EQ(loads(user.err), std::vector<std::string>(4, "Prescott")) << user.err;
  EXPECT_EQ(count(user.err, "blas: "), 0) << user.err;
  EXPECT_EQ(recorded(pinned), std::vector<std::string>(3, "OpenBLAS Prescott"));
}

}  // namespace
}  // namespace cellgan
