// reduce_groups_by_size() (grouped_reduction.h): each group's value is its
// own row's, whatever groups of other sizes are beside it, in the groups'
// order, on the host; empty input is refused.
#include "common/nn/grouped_reduction.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace cellgan {
namespace {

// Groups of two sizes, interleaved, one with a NaN and one with an inf.
std::vector<std::vector<torch::Tensor>> mixed_groups() {
  torch::manual_seed(3);
  std::vector<std::vector<torch::Tensor>> groups;
  for (int g = 0; g < 7; ++g) {
    if (g % 2 == 0)
      groups.push_back({torch::randn({3, 4}), torch::randn({5})});  // 17 values
    else
      groups.push_back({torch::randn({2, 2}), torch::randn({6}), torch::randn({1})});  // 11 values
  }
  groups[3][1][2] = std::numeric_limits<float>::quiet_NaN();
  groups[4][0][1][1] = std::numeric_limits<float>::infinity();
  return groups;
}

TEST(ReduceGroupsBySize, EachGroupGetsItsOwnRowsValueInOrder) {
  const auto groups = mixed_groups();
  const torch::Tensor sums = reduce_groups_by_size(groups, [](const torch::Tensor& rows) { return rows.sum(1); });
  const torch::Tensor finite =
      reduce_groups_by_size(groups, [](const torch::Tensor& rows) { return torch::isfinite(rows).all(1); });
  ASSERT_EQ(sums.sizes(), torch::IntArrayRef({7}));
  EXPECT_TRUE(sums.device().is_cpu());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<torch::Tensor> flat;
    for (const torch::Tensor& t : groups[g]) flat.push_back(t.reshape(-1));
    const torch::Tensor own = torch::cat(flat);
    const bool own_finite = torch::isfinite(own).all().item<bool>();
    EXPECT_EQ(finite[static_cast<std::int64_t>(g)].item<bool>(), own_finite) << "group " << g;
    const float got = sums[static_cast<std::int64_t>(g)].item<float>();
    if (own_finite)
      EXPECT_NEAR(got, own.sum().item<float>(), 1e-5) << "group " << g;
    else
      EXPECT_FALSE(std::isfinite(got)) << "group " << g;
  }
  EXPECT_FALSE(finite[3].item<bool>());
  EXPECT_FALSE(finite[4].item<bool>());
  EXPECT_TRUE(finite[5].item<bool>());
}

// Groups larger than kMostGroupedValues / 2 go one a cat: still each its own value, in order.
TEST(ReduceGroupsBySize, GroupsTooLargeToPutTogetherAreReducedApart) {
  const std::int64_t big = kMostGroupedValues / 2 + 1;
  std::vector<std::vector<torch::Tensor>> groups{{torch::full({big}, 1.0f)}, {torch::ones({3})},
                                                 {torch::full({big}, 2.0f)}, {torch::full({big}, 0.5f)}};
  groups[2].front()[7] = std::numeric_limits<float>::quiet_NaN();
  const torch::Tensor finite =
      reduce_groups_by_size(groups, [](const torch::Tensor& rows) { return torch::isfinite(rows).all(1); });
  EXPECT_TRUE(torch::equal(finite, torch::tensor({true, true, false, true})));
  const torch::Tensor firsts =
      reduce_groups_by_size(groups, [](const torch::Tensor& rows) { return rows.select(1, 0); });
  EXPECT_TRUE(torch::equal(firsts, torch::tensor({1.0f, 1.0f, 2.0f, 0.5f})));
}

TEST(ReduceGroupsBySize, RefusesNoGroupAndEmptyGroups) {
  const auto rows_sum = [](const torch::Tensor& rows) { return rows.sum(1); };
  EXPECT_THROW(reduce_groups_by_size({}, rows_sum), std::invalid_argument);
  EXPECT_THROW(reduce_groups_by_size({{torch::ones({2})}, {}}, rows_sum), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
