// sample_each_stacked() (stacked_sampling.h): each generator's samples from
// one stacked pass are those sample_mixture() gives it alone, from the
// same stream, to rounding; members that draw nothing get nothing; passes
// split at kStackedSampleRows, and a member drawing more goes alone; mixed
// shapes are refused.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common/nn/ensemble.h"
#include "common/nn/stacked_sampling.h"
#include "tests/nn/small_networks.h"

namespace cellgan {
namespace {

std::vector<Individual> generators_of(const NetworkShape& shape, std::size_t n, std::uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<Individual> out;
  for (std::size_t i = 0; i < n; ++i)
    out.emplace_back(Role::kGenerator, shape, 1e-3, AdamSettings{}, LossKind::kBce);
  return out;
}

std::vector<at::Generator> streams(std::size_t n, std::uint64_t seed) {
  std::vector<at::Generator> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(at::detail::createCPUGenerator(seed + i));
  return out;
}

// sample_each_stacked() against sample_mixture() of each generator alone.
void expect_each_as_alone(const NetworkShape& shape, const std::vector<std::int64_t>& counts) {
  std::vector<Individual> gens = generators_of(shape, counts.size(), 7);
  std::vector<const Individual*> ptrs;
  for (const Individual& g : gens) ptrs.push_back(&g);
  const std::vector<torch::Tensor> got = sample_each_stacked(ptrs, counts, streams(counts.size(), 100));
  ASSERT_EQ(got.size(), counts.size());
  std::vector<at::Generator> alone_streams = streams(counts.size(), 100);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "generator " << i << ", " << counts[i] << " rows");
    if (counts[i] == 0) {
      EXPECT_FALSE(got[i].defined());
      continue;
    }
    std::vector<Individual*> one{&gens[i]};
    torch::Generator stream = alone_streams[i];
    const torch::Tensor want = sample_mixture(one, {1.0}, counts[i], stream);
    ASSERT_TRUE(got[i].defined());
    ASSERT_EQ(got[i].sizes(), want.sizes());
    EXPECT_TRUE(torch::allclose(got[i], want, /*rtol=*/1e-5, /*atol=*/1e-6))
        << "largest difference " << (got[i] - want).abs().max().item<double>();
    EXPECT_TRUE(gens[i].generator()->is_training());  // left as it was
  }
}

TEST(SampleEachStacked, MlpGeneratorsGiveTheirOwnSamples) {
  NetworkShape shape;  // mnist mlp
  expect_each_as_alone(shape, {37, 0, 100, 5});
}

TEST(SampleEachStacked, ToyGeneratorsGiveTheirOwnSamples) {
  expect_each_as_alone(test::small_toy_shape(), {3, 64, 17});
}

TEST(SampleEachStacked, DcganGeneratorsGiveTheirOwnSamplesInEvalMode) {
  NetworkShape shape;
  shape.kind = NetworkKind::kDcgan;
  expect_each_as_alone(shape, {6, 11});
}

TEST(SampleEachStacked, ConditionalGeneratorsGiveTheirImagesOnly) {
  NetworkShape shape;
  shape.kind = NetworkKind::kDcganConditional;
  shape.latent_dim += 10;
  shape.data_dim = 794;
  expect_each_as_alone(shape, {4, 9});
}

// 3 members of up to 7,000 rows exceed one pass's rows: the second pass
// starts where the rows would; 20,000 rows are more than a pass takes, and
// go alone a chunk at a time.
TEST(SampleEachStacked, PassesSplitWhereTheRowsWouldExceedTheirBound) {
  ASSERT_GT(3 * 7000, kStackedSampleRows);
  expect_each_as_alone(test::small_toy_shape(), {5000, 7000, 3000, 0, 20000});
}

TEST(SampleEachStacked, RefusesGeneratorsOfDifferentShapesAndMismatchedLists) {
  NetworkShape other = test::small_toy_shape();
  other.toy_hidden = 16;
  std::vector<Individual> a = generators_of(test::small_toy_shape(), 1, 1);
  std::vector<Individual> b = generators_of(other, 1, 1);
  EXPECT_THROW(sample_each_stacked({&a[0], &b[0]}, {2, 2}, streams(2, 1)), std::invalid_argument);
  EXPECT_THROW(sample_each_stacked({&a[0]}, {2, 2}, streams(2, 1)), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
