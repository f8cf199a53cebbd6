// The conditional generator of per_class runs (class_generator.h): the
// classes are sampled in exact proportion, each sample's label is the class
// whose generators drew it, one class samples only its own generators, and
// the ensemble.bin + classes.json pair loads back to the same samples.
#include "common/nn/class_generator.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/image_files.h"
#include "tests/common/test_files.h"
#include "tests/nn/small_networks.h"

namespace cellgan {
namespace {

// Class c's ensemble: `count` fresh toy generators, weights 1..count normalised.
Ensemble class_ensemble(int c, int count) {
  torch::manual_seed(100 + c);
  Ensemble e;
  e.shape = test::small_toy_shape();
  e.cell = c;
  double total = 0.0;
  for (int i = 0; i < count; ++i) {
    e.generators.emplace_back(Role::kGenerator, e.shape, 1e-3, AdamSettings{}, LossKind::kBce);
    e.weights.push_back(i + 1.0);
    total += i + 1.0;
  }
  for (double& w : e.weights) w /= total;
  return e;
}

ClassGenerator three_classes() {
  std::vector<Ensemble> per_class;
  per_class.push_back(class_ensemble(0, 1));
  per_class.push_back(class_ensemble(1, 2));
  per_class.push_back(class_ensemble(2, 1));
  return ClassGenerator(std::move(per_class), {5.0, 3.0, 2.0});  // normalised to 0.5, 0.3, 0.2
}

TEST(ClassGenerator, SamplesTheClassesInProportionWithTheirLabels) {
  ClassGenerator g = three_classes();
  ASSERT_EQ(g.classes(), 3);
  EXPECT_DOUBLE_EQ(g.proportions()[0], 0.5);
  for (const std::int64_t n : {1000, 999, 7}) {
    const ClassSamples s = g.sample(n, 42);
    ASSERT_EQ(s.samples.size(0), n);
    ASSERT_EQ(static_cast<std::int64_t>(s.labels.size()), n);
    EXPECT_TRUE(std::is_sorted(s.labels.begin(), s.labels.end()));
    for (int c = 0; c < 3; ++c) {
      const double share = static_cast<double>(std::count(s.labels.begin(), s.labels.end(), c)) / n;
      EXPECT_NEAR(share, g.proportions()[static_cast<std::size_t>(c)], 1.0 / n + 1e-12) << "class " << c << ", n " << n;
    }
    // The same samples as ensemble.bin's mixture alone.
    EXPECT_TRUE(torch::equal(s.samples, g.mixture().sample(n, 42)));
  }
  // Class 1 has two generators weighted 1/3 and 2/3 within it: 0.1 and 0.2 overall.
  EXPECT_NEAR(g.mixture().weights[1], 0.3 / 3, 1e-12);
  EXPECT_NEAR(g.mixture().weights[2], 0.3 * 2 / 3, 1e-12);
}

TEST(ClassGenerator, AClassIsSampledFromItsOwnGeneratorsOnly) {
  ClassGenerator g = three_classes();
  // Class 2 has one generator, the last one of the mixture.
  const torch::Tensor own = g.sample_class(2, 50, 9);
  Ensemble alone = class_ensemble(2, 1);
  EXPECT_TRUE(torch::equal(own, alone.sample(50, 9)));
  // Class 0's generator is another network: other samples from the same latents.
  EXPECT_FALSE(torch::equal(g.sample_class(0, 50, 9), own));
  EXPECT_THROW(g.sample_class(3, 5, 1), std::out_of_range);
  EXPECT_THROW(g.sample_class(-1, 5, 1), std::out_of_range);
}

TEST(ClassGenerator, EnsembleAndIndexLoadBackToTheSameSamples) {
  test::TempDir tmp;
  ClassGenerator g = three_classes();
  const std::string path = tmp.file("ensemble.bin");
  g.mixture().save(path);
  EXPECT_EQ(ClassGenerator::index_path(path), tmp.file("classes.json"));
  // Without the index it is no conditional generator: one line naming the file.
  const std::string missing = test::input_error_of([&] { ClassGenerator::load(path); });
  EXPECT_NE(missing.find("classes.json"), std::string::npos) << missing;

  write_file_atomic(tmp.file("classes.json"), g.index_json());
  ClassGenerator back = ClassGenerator::load(path);
  ASSERT_EQ(back.classes(), 3);
  EXPECT_EQ(back.proportions(), g.proportions());
  const ClassSamples a = g.sample(100, 3);
  const ClassSamples b = back.sample(100, 3);
  EXPECT_TRUE(torch::equal(a.samples, b.samples));
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_TRUE(torch::equal(g.sample_class(1, 20, 4), back.sample_class(1, 20, 4)));

  // An index that does not cover the ensemble's generators is refused.
  write_file_atomic(tmp.file("classes.json"),
                    R"({"classes": 2, "proportions": [0.5, 0.5], "generators": [[0, 1], [1, 1]]})");
  const std::string short_index = test::input_error_of([&] { ClassGenerator::load(path); });
  EXPECT_NE(short_index.find("generators"), std::string::npos) << short_index;
}

TEST(ClassGenerator, RejectsMismatchedClasses) {
  std::vector<Ensemble> two;
  two.push_back(class_ensemble(0, 1));
  two.push_back(class_ensemble(1, 1));
  EXPECT_THROW(ClassGenerator(std::move(two), {1.0}), std::invalid_argument);
  std::vector<Ensemble> one;
  one.push_back(class_ensemble(0, 1));
  EXPECT_THROW(ClassGenerator(std::move(one), {0.0}), std::invalid_argument);
}

}  // namespace
}  // namespace cellgan
