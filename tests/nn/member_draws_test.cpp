// Generators of a cell's own and draws into members' rows (common/nn/member_draws.h)
// on the CPU; tests/gpu/gpu_test.cpp checks the same on a GPU.
#include "common/nn/member_draws.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>
#include <vector>

namespace cellgan {
namespace {

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() && torch::equal(a.contiguous().view(torch::kInt32), b.contiguous().view(torch::kInt32));
}

// A generator of its own on the CPU draws what createCPUGenerator(seed)
// and Torch's global generator seeded alike draw, and its draws leave
// Torch's global generator where it was.
TEST(MemberDraws, AGeneratorOnTheCpuIsSeededAsTorchsGlobalOne) {
  const at::Generator own = generator_on(torch::kCPU, 77);
  EXPECT_EQ(own.device(), torch::Device(torch::kCPU));
  EXPECT_EQ(own.current_seed(), 77u);
  torch::manual_seed(77);
  const torch::Tensor global = torch::randn({5, 3});
  torch::manual_seed(77);
  const torch::Tensor first_global = torch::rand({4});
  torch::manual_seed(77);
  const torch::Tensor drawn = torch::randn({5, 3}, own, torch::kFloat32);
  EXPECT_TRUE(same_bits(drawn, global));
  EXPECT_TRUE(same_bits(torch::rand({4}), first_global)) << "drawing from its own generator moved the global one";
  EXPECT_TRUE(same_bits(torch::randn({5, 3}, at::detail::createCPUGenerator(77), torch::kFloat32), drawn));
}

// Row p is the draw of a new tensor from generators[p]; members sharing a
// generator draw one after another; a row does not depend on the other
// rows' generators (a cell's draws do not depend on its stack).
TEST(MemberDraws, EachRowIsItsGeneratorsDrawWhateverTheOtherRows) {
  const auto streams = [](std::vector<std::uint64_t> seeds) {
    std::vector<at::Generator> out;
    for (const std::uint64_t s : seeds) out.push_back(generator_on(torch::kCPU, s));
    return out;
  };
  // Cells 2, 5 (two members) and 7 in one stack; cell 5 alone.
  const auto three = [&] {
    const std::vector<at::Generator> g = streams({2, 5, 7});
    return std::vector<at::Generator>{g[0], g[1], g[1], g[2]};
  };
  const auto alone = [] {
    const at::Generator g = generator_on(torch::kCPU, 5);
    return std::vector<at::Generator>{g, g};
  };
  const std::vector<std::int64_t> row{6, 3, 4, 4};  // a dropout mask's [B, C, H, W]
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind == 0 ? "normal" : kind == 1 ? "uniform" : "dropout");
    const auto draw = [kind](const torch::Tensor& into, const std::vector<at::Generator>& g) {
      if (kind == 0) draw_normal_rows(into, g);
      if (kind == 1) draw_uniform_rows(into, g);
      if (kind == 2) draw_dropout_rows(into, 0.3, g);
      return into;
    };
    const auto fresh = [kind, &row](const at::Generator& g) {
      if (kind == 0) return torch::randn(row, g, torch::kFloat32);
      if (kind == 1) return torch::rand(row, g, torch::kFloat32);
      return dropout_mask(row, 0.3, g);
    };
    const torch::Tensor stacked = draw(torch::empty({4, 6, 3, 4, 4}), three());
    const torch::Tensor own = draw(torch::empty({2, 6, 3, 4, 4}), alone());
    EXPECT_TRUE(same_bits(stacked[1], own[0]));
    EXPECT_TRUE(same_bits(stacked[2], own[1]));
    const at::Generator five = generator_on(torch::kCPU, 5);
    EXPECT_TRUE(same_bits(own[0], fresh(five)));
    EXPECT_TRUE(same_bits(own[1], fresh(five)));  // the next draw of the shared generator
    EXPECT_TRUE(same_bits(stacked[0], fresh(generator_on(torch::kCPU, 2))));
    EXPECT_TRUE(same_bits(stacked[3], fresh(generator_on(torch::kCPU, 7))));
    EXPECT_FALSE(same_bits(stacked[1], stacked[2]));
  }
  // A dropout mask is Dropout's: 0 or 1 / (1 - rate), from the same draw.
  torch::manual_seed(9);
  const torch::Tensor ones = torch::ones(row);
  const torch::Tensor by_dropout = torch::nn::Dropout(0.3)->forward(ones);
  EXPECT_TRUE(same_bits(dropout_mask(row, 0.3, generator_on(torch::kCPU, 9)), by_dropout));
}

TEST(MemberDraws, ARowCountOtherThanTheGeneratorsIsRefused) {
  const std::vector<at::Generator> two{generator_on(torch::kCPU, 1), generator_on(torch::kCPU, 2)};
  EXPECT_THROW(draw_normal_rows(torch::empty({3, 4}), two), std::invalid_argument);
  EXPECT_THROW(draw_dropout_rows(torch::empty({2, 4}), 1.0, two), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
