// Tests of common/launch_rank.h: the rank of mpirun, PMIx, Hydra and srun,
// read before MPI_Init; 0 when started by hand or when the value is junk.
#include "common/launch_rank.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace cellgan {
namespace {

const char* const kNames[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};

// Sets the launchers' variables for one test and restores them after.
class LaunchEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      const char* v = std::getenv(name);
      saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_)
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST_F(LaunchEnvironment, NoLauncherIsRankZero) { EXPECT_EQ(launch_rank(), 0); }

TEST_F(LaunchEnvironment, EachLauncherIsRead) {
  for (const char* name : kNames) {
    ::setenv(name, "3", 1);
    EXPECT_EQ(launch_rank(), 3) << name;
    ::unsetenv(name);
  }
}

TEST_F(LaunchEnvironment, OpenMpiComesFirstAndJunkIsSkipped) {
  ::setenv("SLURM_PROCID", "5", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  EXPECT_EQ(launch_rank(), 2);
  ::setenv("OMPI_COMM_WORLD_RANK", "two", 1);
  EXPECT_EQ(launch_rank(), 5);
  ::setenv("SLURM_PROCID", "-1", 1);
  EXPECT_EQ(launch_rank(), 0);
}

}  // namespace
}  // namespace cellgan
