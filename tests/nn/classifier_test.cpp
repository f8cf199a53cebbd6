// Tests of the score classifier (common/nn/classifier): its shape, that a
// few epochs learn (synthetic data always; a Fashion-MNIST subset when that
// dataset is installed), deterministic training, the save/load round trip
// and clear errors for missing or corrupt files.
#include "common/nn/classifier.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "common/error.h"
#include "tests/nn/synthetic_images.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;

const char* const kFashionFolder = "/usr/share/datasets/fashion-mnist";

// A fresh folder under the build tree, removed at the end of the test.
class ClassifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = fs::path(CELLGAN_BINARY_DIR) / "test-tmp" / (std::string("classifier-") + info->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  std::string file(const std::string& name) const { return (folder_ / name).string(); }

  fs::path folder_;
};

// The first `n` images of `data`.
ImageData head(const ImageData& data, std::int64_t n) {
  ImageData out = data;
  out.count = n;
  out.pixels.resize(static_cast<std::size_t>(n * data.dim()));
  out.labels.resize(static_cast<std::size_t>(n));
  return out;
}

torch::Tensor logits_of(ScoreClassifier& classifier, const ImageData& data) {
  torch::NoGradGuard no_grad;
  classifier->eval();
  auto* pixels = const_cast<float*>(data.pixels.data());
  return classifier->forward(torch::from_blob(pixels, {data.count, data.dim()}, torch::kFloat32));
}

TEST_F(ClassifierTest, HasTheSpecifiedShape) {
  ScoreClassifier classifier;
  std::int64_t params = 0;
  for (const auto& p : classifier->parameters()) params += p.numel();
  // conv1 10*25+10, conv2 20*10*25+20, fc1 320*50+50, fc2 50*10+10.
  EXPECT_EQ(params, 260 + 5020 + 16050 + 510);
  const auto flat = torch::rand({3, 784}) * 2 - 1;
  const auto logits = classifier->forward(flat);
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{3, 10}));
  EXPECT_TRUE(torch::equal(logits, classifier->forward(flat.reshape({3, 1, 28, 28}))));
  EXPECT_THROW(classifier->forward(torch::rand({3, 100})), std::invalid_argument);
}

TEST_F(ClassifierTest, LearnsSyntheticClassesAndSavesWhatItTrained) {
  const auto train = test::synthetic_images(1000, /*seed=*/1);
  const auto held_out = test::synthetic_images(300, /*seed=*/2);
  const auto path = file("synthetic.pt");
  const auto report = train_classifier(train, held_out, /*epochs=*/2, /*seed=*/5, path);
  EXPECT_EQ(report.epochs, 2);
  EXPECT_GT(report.test_accuracy, 0.9);
  EXPECT_GT(report.seconds, 0.0);
  ASSERT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  // The saved module is the trained one: it reproduces the reported accuracy.
  auto loaded = load_classifier(path);
  EXPECT_DOUBLE_EQ(classifier_accuracy(loaded, held_out), report.test_accuracy);
}

TEST_F(ClassifierTest, TrainingIsDeterministicPerSeed) {
  const auto train = test::synthetic_images(200, /*seed=*/3);
  const auto held_out = test::synthetic_images(50, /*seed=*/4);
  train_classifier(train, held_out, /*epochs=*/1, /*seed=*/9, file("a.pt"));
  train_classifier(train, held_out, /*epochs=*/1, /*seed=*/9, file("b.pt"));
  train_classifier(train, held_out, /*epochs=*/1, /*seed=*/10, file("c.pt"));
  auto a = load_classifier(file("a.pt"));
  auto b = load_classifier(file("b.pt"));
  auto c = load_classifier(file("c.pt"));
  EXPECT_TRUE(torch::equal(logits_of(a, held_out), logits_of(b, held_out)));
  EXPECT_FALSE(torch::equal(logits_of(a, held_out), logits_of(c, held_out)));
}

TEST_F(ClassifierTest, SaveLoadRoundTripGivesIdenticalLogits) {
  torch::manual_seed(21);
  ScoreClassifier original;
  const auto path = file("round-trip.pt");
  torch::save(original, path);
  auto loaded = load_classifier(path);
  const auto images = test::synthetic_images(64, /*seed=*/8);
  EXPECT_TRUE(torch::equal(logits_of(original, images), logits_of(loaded, images)));
  // A fresh, differently seeded module differs, so the check has teeth.
  torch::manual_seed(22);
  ScoreClassifier other;
  EXPECT_FALSE(torch::equal(logits_of(other, images), logits_of(loaded, images)));
}

TEST_F(ClassifierTest, MissingFileThrowsInputErrorNamingIt) {
  const auto path = file("absent.pt");
  try {
    load_classifier(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("cellgan classifier"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST_F(ClassifierTest, CorruptFileThrowsInputErrorNamingIt) {
  const auto path = file("corrupt.pt");
  std::ofstream(path) << "not a torch archive";
  try {
    load_classifier(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST_F(ClassifierTest, BadTrainingDataIsRejected) {
  auto train = test::synthetic_images(20, /*seed=*/1);
  const auto held_out = test::synthetic_images(10, /*seed=*/2);
  // The command line rejects --epochs 0 itself: here it is a broken contract.
  EXPECT_THROW(train_classifier(train, held_out, /*epochs=*/0, /*seed=*/1, file("x.pt")), std::invalid_argument);
  train.labels[3] = 10;
  EXPECT_THROW(train_classifier(train, held_out, /*epochs=*/1, /*seed=*/1, file("x.pt")), InputError);
  EXPECT_FALSE(fs::exists(file("x.pt")));
}

TEST_F(ClassifierTest, LearnsFashionMnistSubset) {
  if (!fs::exists(fs::path(kFashionFolder) / "train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST is not installed in " << kFashionFolder;
  }
  DataConfig data;
  data.dataset = DatasetKind::kFashion;
  data.path = kFashionFolder;
  data.train_limit = 2000;
  const auto train = load_image_data(data, Split::kTrain);
  const auto test_split = head(load_image_data(data, Split::kTest), 500);
  ASSERT_EQ(train.count, 2000);
  const auto report = train_classifier(train, test_split, /*epochs=*/3, /*seed=*/1, file("fashion.pt"));
  // Chance is 0.1.
  EXPECT_GT(report.test_accuracy, 0.6);
  auto loaded = load_classifier(file("fashion.pt"));
  EXPECT_DOUBLE_EQ(classifier_accuracy(loaded, test_split), report.test_accuracy);
}

}  // namespace
}  // namespace cellgan
