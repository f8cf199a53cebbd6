// runtime.device resolved (common/nn/device.h): the forms, the one-line
// errors, the node-local rank from the launcher's environment, and the
// host reads of device values. Runs on any machine: what depends on a GPU
// being visible is asserted for both cases.
#include "common/nn/device.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/config.h"
#include "common/error.h"
#include "common/nn/individual.h"

namespace cellgan {
namespace {

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string error_of(const std::string& spec, int local_rank = 0) {
  try {
    resolve_device(spec, local_rank);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Device, SpecForms) {
  for (const char* good : {"auto", "cpu", "cuda", "cuda:0", "cuda:7", "cuda:1023"}) EXPECT_TRUE(is_device_spec(good)) << good;
  for (const char* bad : {"", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:x", "cuda:1024", "cuda:00000", "cpu:0", " cpu"})
    EXPECT_FALSE(is_device_spec(bad)) << bad;
}

TEST(Device, CpuIsAlwaysTheCpu) {
  EXPECT_TRUE(resolve_device("cpu", 5).is_cpu());
  EXPECT_EQ(describe_device(resolve_device("cpu", 0)), "cpu");
}

TEST(Device, AutoTakesTheGpuOfTheLocalRankWhenThereIsOne) {
  const int gpus = visible_gpus();
  for (int rank : {0, 1, 5}) {
    const torch::Device d = resolve_device("auto", rank);
    if (gpus == 0) {
      EXPECT_TRUE(d.is_cpu());
    } else {
      ASSERT_TRUE(d.is_cuda());
      EXPECT_EQ(d.index(), rank % gpus);
      EXPECT_EQ(describe_device(d), "cuda:" + std::to_string(rank % gpus));
    }
  }
}

TEST(Device, AGpuThatIsNotThereIsOneLineNamingTheKey) {
  const int gpus = visible_gpus();
  const std::string beyond = "cuda:" + std::to_string(gpus);
  const std::string error = error_of(beyond);
  EXPECT_NE(error.find("runtime.device: " + beyond), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  if (gpus == 0) {
    const std::string plain = error_of("cuda");
    EXPECT_NE(plain.find("runtime.device: cuda asked for, but no GPU is visible"), std::string::npos) << plain;
  }
  const std::string malformed = error_of("gpu0");
  EXPECT_NE(malformed.find("'gpu0' is not a device: expected auto, cpu, cuda or cuda:N"), std::string::npos)
      << malformed;
}

TEST(Device, NodeLocalRankComesFromTheLauncher) {
  ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_RANK", nullptr), slurm("SLURM_LOCALID", nullptr),
      hydra("MPI_LOCALRANKID", nullptr);
  EXPECT_EQ(node_local_rank(), 0);
  {
    ScopedEnv s("SLURM_LOCALID", "3");
    EXPECT_EQ(node_local_rank(), 3);
    ScopedEnv h("MPI_LOCALRANKID", "5");  // Hydra's own wins over the SLURM step's it inherits
    EXPECT_EQ(node_local_rank(), 5);
    ScopedEnv o("OMPI_COMM_WORLD_LOCAL_RANK", "6");  // Open MPI's own wins
    EXPECT_EQ(node_local_rank(), 6);
  }
  ScopedEnv junk("OMPI_COMM_WORLD_LOCAL_RANK", "two");
  EXPECT_EQ(node_local_rank(), 0);
}

TEST(Device, HostValuesAreWhatItemReads) {
  const torch::Tensor a = torch::tensor(0.1f), b = torch::tensor(-2.5f), c = torch::tensor(true);
  const std::vector<double> v = host_values({a, b, c.to(torch::kFloat32)});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], a.item<double>());  // the float's exact double, not 0.1
  EXPECT_EQ(v[1], -2.5);
  EXPECT_EQ(v[2], 1.0);
  EXPECT_TRUE(host_values({}).empty());
}

TEST(Device, AnIndividualsBytesDoNotDependOnItsDevice) {
  // On the CPU: decoding onto the CPU keeps the bytes (GPU ones: tests/gpu).
  torch::manual_seed(3);
  NetworkShape shape;
  shape.kind = NetworkKind::kToy;
  shape.data_dim = 2;
  shape.latent_dim = 4;
  Individual g(Role::kGenerator, shape, 1e-3, AdamSettings{}, LossKind::kBce, torch::kCPU);
  EXPECT_TRUE(g.device().is_cpu());
  const auto bytes = g.encode();
  const Individual back = Individual::decode(bytes, shape, AdamSettings{}, true, torch::kCPU);
  EXPECT_EQ(back.encode(), bytes);
}

}  // namespace
}  // namespace cellgan
