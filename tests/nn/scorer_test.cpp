// Tests of make_scorer (common/nn/scores): the toy scorer on the ring and
// grid mixtures, and the image scorer end to end on a synthetic IDX
// dataset (classifier trained here), including its on-disk cache of the
// real statistics and how a stale or corrupt cache is recomputed.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/dataset.h"
#include "common/error.h"
#include "common/idx.h"
#include "common/nn/classifier.h"
#include "common/nn/scores.h"
#include "common/rng.h"
#include "tests/nn/synthetic_images.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;

torch::Tensor as_tensor(std::vector<float> points) {
  const auto n = static_cast<std::int64_t>(points.size() / 2);
  return torch::from_blob(points.data(), {n, 2}, torch::kFloat32).clone();
}

void check_toy_scorer(DatasetKind dataset, double max_fid) {
  SCOPED_TRACE(to_string(dataset));
  Config config;
  config.seed = 3;
  config.data.dataset = dataset;
  const auto scorer = make_scorer(config);
  const auto mixture = toy_mixture(dataset);
  constexpr std::int64_t kSamples = 2500;

  // Samples from the mixture itself (another stream than the scorer's).
  const auto good = as_tensor(sample_toy(mixture, kSamples, derive_seed(config.seed, Stream::kToyData, 1)));
  const auto good_report = scorer->report(good);
  EXPECT_EQ(good_report.at("modes_covered"), static_cast<double>(mixture.mode_count()));
  EXPECT_EQ(good_report.at("mode_count"), static_cast<double>(mixture.mode_count()));
  EXPECT_GT(good_report.at("high_quality"), 0.95);
  EXPECT_LT(good_report.at("reverse_kl"), 0.05);
  EXPECT_LT(good_report.at("frechet_2d"), max_fid);
  EXPECT_LT(good_report.at("mode_tvd"), 0.1);
  EXPECT_EQ(objective_name(config), "mode_tvd");
  EXPECT_DOUBLE_EQ(scorer->objective(good), good_report.at("mode_tvd"));

  // Every sample at the first mode: one mode covered, a far larger FID.
  const auto collapsed = torch::tensor({mixture.modes[0], mixture.modes[1]}).repeat({kSamples, 1});
  const auto collapsed_report = scorer->report(collapsed);
  EXPECT_EQ(collapsed_report.at("modes_covered"), 1.0);
  EXPECT_GT(collapsed_report.at("frechet_2d"), 1.0);
  EXPECT_GT(collapsed_report.at("frechet_2d"), 50.0 * good_report.at("frechet_2d"));
  const double m = static_cast<double>(mixture.mode_count());
  EXPECT_NEAR(collapsed_report.at("mode_tvd"), (m - 1.0) / m, 1e-12);

  // A Gaussian blob with the mixture's mean and spread (both mixtures are
  // symmetric, so their covariance is diagonal): the 2-D Frechet distance
  // barely tells it from the mixture, the objective does.
  torch::manual_seed(5);
  const auto blob = good.mean(/*dim=*/0) + good.std(/*dim=*/0) * torch::randn({kSamples, 2});
  const auto blob_report = scorer->report(blob);
  EXPECT_LT(blob_report.at("frechet_2d"), max_fid);
  EXPECT_GT(blob_report.at("mode_tvd"), 0.8);

  // The real sample is fixed by the seed: a second scorer agrees exactly.
  EXPECT_EQ(make_scorer(config)->objective(good), scorer->objective(good));
}

TEST(ToyScorerTest, RingMixtureSamplesScoreWellCollapseDoesNot) { check_toy_scorer(DatasetKind::kRing, 0.05); }
TEST(ToyScorerTest, GridMixtureSamplesScoreWellCollapseDoesNot) { check_toy_scorer(DatasetKind::kGrid, 0.1); }

TEST(ToyScorerTest, RejectsWrongSampleShape) {
  Config config;
  config.data.dataset = DatasetKind::kRing;
  const auto scorer = make_scorer(config);
  EXPECT_THROW(scorer->objective(torch::zeros({10, 3})), std::invalid_argument);
  EXPECT_THROW(scorer->objective(torch::zeros({1, 2})), std::invalid_argument);
}

// Features of parts, joined, score as the joined samples do (the mixture
// ES computes each generator's features once and shares them). A single
// row has features, but too few samples to score.
TEST(ToyScorerTest, FeaturesOfPartsScoreAsTheWhole) {
  Config config;
  config.data.dataset = DatasetKind::kRing;
  const auto scorer = make_scorer(config);
  torch::manual_seed(3);
  const auto a = torch::randn({150, 2});
  const auto b = torch::randn({1, 2});
  const auto joined = scorer->report_features(torch::cat({scorer->features(a), scorer->features(b)}));
  EXPECT_EQ(joined, scorer->report(torch::cat({a, b})));
  EXPECT_THROW(scorer->report(b), std::invalid_argument);
  EXPECT_THROW(scorer->report_features(scorer->features(b)), std::invalid_argument);
}

// A synthetic IDX dataset and a classifier trained on it, shared by the
// image scorer tests (built once; about a second). The folder is per
// process, as ctest may run these tests in parallel processes.
class ImageScorerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = new fs::path(fs::path(CELLGAN_BINARY_DIR) / "test-tmp" /
                           ("image-scorer-" + std::to_string(::getpid())));
    fs::remove_all(*folder_);
    fs::create_directories(*folder_);
    write_split("train", 1000, /*seed=*/11);
    write_split("t10k", 300, /*seed=*/12);
    train_classifier(/*seed=*/1);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*folder_);
    delete folder_;
  }

  static void write_split(const std::string& prefix, std::int64_t count, std::uint32_t seed) {
    std::vector<std::uint8_t> labels;
    const auto images = test::synthetic_idx_images(count, seed, labels);
    write_idx_images((*folder_ / (prefix + "-images-idx3-ubyte")).string(), images);
    write_idx_labels((*folder_ / (prefix + "-labels-idx1-ubyte")).string(), labels);
  }

  static Config config() {
    Config c;
    c.data.dataset = DatasetKind::kIdx;
    c.data.path = folder_->string();
    return c;  // evaluation.classifier empty: "<folder>/classifier.pt"
  }
  static std::string classifier_path() { return (*folder_ / "classifier.pt").string(); }
  static std::string cache_path() { return classifier_path() + ".stats.pt"; }

  static void train_classifier(std::uint64_t seed) {
    const auto c = config();
    cellgan::train_classifier(load_image_data(c.data, Split::kTrain), load_image_data(c.data, Split::kTest),
                              /*epochs=*/6, seed, classifier_path());
  }

  static torch::Tensor images(const ImageData& data) {
    auto* pixels = const_cast<float*>(data.pixels.data());
    return torch::from_blob(pixels, {data.count, data.dim()}, torch::kFloat32).clone();
  }
  // The test split, all of it or only the images of class 0.
  static torch::Tensor test_images(bool only_class_zero) {
    const auto data = load_image_data(config().data, Split::kTest);
    auto all = images(data);
    if (!only_class_zero) return all;
    std::vector<std::int64_t> rows;
    for (std::int64_t i = 0; i < data.count; ++i) {
      if (data.labels[static_cast<std::size_t>(i)] == 0) rows.push_back(i);
    }
    return all.index_select(0, torch::tensor(rows, torch::kInt64));
  }

  static fs::path* folder_;
};
fs::path* ImageScorerTest::folder_ = nullptr;

TEST_F(ImageScorerTest, RealImagesScoreBetterThanCollapsedOrNoise) {
  fs::remove(cache_path());
  const auto scorer = make_scorer(config());
  const auto real = scorer->report(test_images(/*only_class_zero=*/false));
  const auto one_class = scorer->report(test_images(/*only_class_zero=*/true));
  auto gen = at::detail::createCPUGenerator(/*seed_val=*/5);
  const auto noise = scorer->report(torch::rand({300, 784}, gen) * 2 - 1);

  // Held-out real images: balanced labels, confident and varied predictions.
  EXPECT_LT(real.at("tvd"), 0.05);
  EXPECT_GT(real.at("is"), 7.0);
  EXPECT_EQ(real.at("classes_covered"), 10.0);
  EXPECT_LT(real.at("fid"), 0.2 * one_class.at("fid"));
  EXPECT_LT(real.at("fid"), 0.2 * noise.at("fid"));
  // One class only: TVD 1 - 1/10, IS near 1.
  EXPECT_NEAR(one_class.at("tvd"), 0.9, 0.02);
  EXPECT_LT(one_class.at("is"), 1.5);
  EXPECT_LE(one_class.at("classes_covered"), 2.0);  // class zero, and perhaps a few misread
  EXPECT_GT(noise.at("tvd"), 0.3);
  EXPECT_EQ(objective_name(config()), "fid");
  EXPECT_DOUBLE_EQ(scorer->objective(test_images(false)), real.at("fid"));
}

TEST_F(ImageScorerTest, FeaturesOfPartsScoreAsTheWhole) {
  const auto scorer = make_scorer(config());
  const auto images = test_images(/*only_class_zero=*/false);
  const std::int64_t n = images.size(0);
  const auto a = images.narrow(0, 0, n / 2 + 17);
  const auto b = images.narrow(0, n / 2 + 17, n - n / 2 - 17);
  const auto parts = torch::cat({scorer->features(a), scorer->features(b)});
  EXPECT_EQ(parts.sizes(), (std::vector<std::int64_t>{n, 10}));
  const auto joined = scorer->report_features(parts);
  const auto whole = scorer->report(images);
  ASSERT_EQ(joined.size(), whole.size());
  // The classifier works in float32 batches of 100, which the parts cut differently: equal to float rounding.
  for (const auto& [name, value] : whole) EXPECT_NEAR(joined.at(name), value, 1e-6 * std::max(1.0, std::abs(value))) << name;
  EXPECT_THROW(scorer->report(images.narrow(0, 0, 1)), std::invalid_argument);
}

// Reports computed together are each one's own: to float64 rounding when
// the row counts agree (batched), exactly when they do not (one by one).
TEST_F(ImageScorerTest, ReportsTogetherAreEachOnesOwn) {
  const auto scorer = make_scorer(config());
  const auto images = test_images(/*only_class_zero=*/false);
  const auto zeros = test_images(/*only_class_zero=*/true);
  auto gen = at::detail::createCPUGenerator(/*seed_val=*/8);
  const std::int64_t n = std::min<std::int64_t>(zeros.size(0), 120);
  const std::vector<torch::Tensor> features = {scorer->features(images.narrow(0, 0, n)),
                                               scorer->features(zeros.narrow(0, 0, n)),
                                               scorer->features(torch::rand({n, 784}, gen) * 2 - 1)};
  const auto together = scorer->report_features_together(features);
  ASSERT_EQ(together.size(), features.size());
  for (std::size_t i = 0; i < features.size(); ++i) {
    const auto alone = scorer->report_features(features[i]);
    ASSERT_EQ(together[i].size(), alone.size());
    for (const auto& [name, value] : alone)
      EXPECT_NEAR(together[i].at(name), value, 1e-9 * std::max(1.0, std::abs(value))) << i << " " << name;
  }
  EXPECT_NE(together[0].at("fid"), together[1].at("fid"));
  const auto uneven = scorer->report_features_together({features[0], features[1].narrow(0, 0, n - 7)});
  EXPECT_EQ(uneven[1], scorer->report_features(features[1].narrow(0, 0, n - 7)));
}

TEST_F(ImageScorerTest, RealStatisticsAreCachedBesideTheClassifier) {
  fs::remove(cache_path());
  const auto samples = test_images(/*only_class_zero=*/false);
  const double fresh = make_scorer(config())->objective(samples);
  ASSERT_TRUE(fs::exists(cache_path()));
  const auto written = fs::last_write_time(cache_path());

  // A second scorer reads the cache (not rewritten) and agrees exactly.
  EXPECT_EQ(make_scorer(config())->objective(samples), fresh);
  EXPECT_EQ(fs::last_write_time(cache_path()), written);

  // A corrupt cache is recomputed, with the same result.
  std::ofstream(cache_path(), std::ios::trunc) << "garbage";
  EXPECT_EQ(make_scorer(config())->objective(samples), fresh);
  EXPECT_GT(fs::file_size(cache_path()), 100u);
}

TEST_F(ImageScorerTest, StaleCacheIsRecomputed) {
  const auto samples = test_images(/*only_class_zero=*/false);
  const double full = make_scorer(config())->objective(samples);
  ASSERT_TRUE(fs::exists(cache_path()));

  // Fewer training images: other statistics, in a cache of their own
  // (named by the limit), the whole set's left as it was.
  const auto written = fs::last_write_time(cache_path());
  auto limited = config();
  limited.data.train_limit = 200;
  const std::string limited_cache = real_stats_cache(classifier_path(), limited.data, torch::kCPU);
  EXPECT_EQ(limited_cache, classifier_path() + ".stats-limit-200.pt");
  fs::remove(limited_cache);
  const double from_limited = make_scorer(limited)->objective(samples);
  EXPECT_NE(from_limited, full);
  EXPECT_TRUE(fs::exists(limited_cache));
  EXPECT_EQ(fs::last_write_time(cache_path()), written);
  EXPECT_EQ(make_scorer(config())->objective(samples), full);
  EXPECT_EQ(make_scorer(limited)->objective(samples), from_limited);

  // The same file made from other data (here the subset's statistics put
  // where the whole set's belong) is noticed and recomputed.
  fs::copy_file(limited_cache, cache_path(), fs::copy_options::overwrite_existing);
  EXPECT_EQ(make_scorer(config())->objective(samples), full);

  // Another classifier: other logits, so other statistics.
  train_classifier(/*seed=*/2);
  const double retrained = make_scorer(config())->objective(samples);
  EXPECT_NE(retrained, full);
  EXPECT_EQ(make_scorer(config())->objective(samples), retrained);
}

TEST_F(ImageScorerTest, ExplicitClassifierPathIsUsedAndMissingOneNamed) {
  auto c = config();
  c.evaluation.classifier = (*folder_ / "elsewhere.pt").string();
  try {
    make_scorer(c);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(c.evaluation.classifier), std::string::npos) << e.what();
  }
  fs::copy_file(classifier_path(), c.evaluation.classifier, fs::copy_options::overwrite_existing);
  const auto samples = test_images(/*only_class_zero=*/false);
  EXPECT_EQ(make_scorer(c)->objective(samples), make_scorer(config())->objective(samples));
  EXPECT_TRUE(fs::exists(c.evaluation.classifier + ".stats.pt"));
}

TEST_F(ImageScorerTest, MissingTrainingDataIsReported) {
  auto c = config();
  c.data.path = (*folder_ / "no-such-folder").string();
  c.evaluation.classifier = classifier_path();
  EXPECT_THROW(make_scorer(c), InputError);
}

}  // namespace
}  // namespace cellgan
