// Ensembles: exact-proportion sampling, determinism, and the checked file form.
#include "common/nn/ensemble.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "common/bytes.h"
#include "common/error.h"
#include "tests/nn/small_networks.h"

namespace cellgan {
namespace {

Ensemble make_ensemble(int generators, std::int64_t toy_layers = 2) {
  NetworkShape s = test::small_toy_shape();
  s.toy_layers = toy_layers;
  Ensemble e;
  e.shape = s;
  e.cell = 2;
  torch::manual_seed(5);
  for (int i = 0; i < generators; ++i) e.generators.emplace_back(Role::kGenerator, s, 2e-4, AdamSettings{}, LossKind::kBce);
  e.weights.assign(generators, 1.0 / generators);
  return e;
}

TEST(Ensemble, SampleCountsAreExactProportions) {
  const auto counts = Ensemble::sample_counts({0.5, 0.25, 0.25}, 1000);
  EXPECT_EQ(counts, (std::vector<std::int64_t>{500, 250, 250}));
  const auto thirds = Ensemble::sample_counts({1.0 / 3, 1.0 / 3, 1.0 / 3}, 100);
  EXPECT_EQ(std::accumulate(thirds.begin(), thirds.end(), std::int64_t{0}), 100);
  for (auto c : thirds) EXPECT_TRUE(c == 33 || c == 34);
  const auto zero = Ensemble::sample_counts({0.0, 1.0}, 10);
  EXPECT_EQ(zero, (std::vector<std::int64_t>{0, 10}));
}

TEST(Ensemble, SamplingIsDeterministicPerSeed) {
  Ensemble e = make_ensemble(3);
  const auto a = e.sample(300, 11);
  const auto b = e.sample(300, 11);
  const auto c = e.sample(300, 12);
  EXPECT_EQ(a.sizes(), (std::vector<std::int64_t>{300, 2}));
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, c));
}

// More samples than one chunk: each generator's rows are its latent draws,
// in order, passed through it a chunk at a time (the same numbers as one
// pass, to float rounding), in the generators' order.
TEST(Ensemble, ManySamplesAreTheGeneratorsOnTheirDrawsChunkByChunk) {
  Ensemble e = make_ensemble(2);
  const std::int64_t n = 2 * kSampleChunk + 500;  // 1250 rows of each generator: two chunks
  const torch::Tensor samples = e.sample(n, 11);
  ASSERT_EQ(samples.sizes(), (std::vector<std::int64_t>{n, 2}));
  torch::Generator gen = at::detail::createCPUGenerator(11);
  torch::NoGradGuard no_grad;
  std::int64_t at = 0;
  for (Individual& g : e.generators) {
    g.generator()->eval();
    const torch::Tensor z = torch::randn({n / 2, e.shape.latent_dim}, gen);
    const torch::Tensor whole = g.generator()->forward(z);
    EXPECT_TRUE(torch::allclose(samples.narrow(0, at, n / 2), whole, /*rtol=*/1e-5, /*atol=*/1e-6));
    at += n / 2;
  }
}

TEST(Ensemble, EncodingInPlaceGivesTheSameBytesAfterAnyPrefix) {
  Ensemble e = make_ensemble(3);
  e.weights = {0.5, 0.3, 0.2};
  const auto alone = e.encode();
  std::vector<const Individual*> ptrs;
  for (const auto& g : e.generators) ptrs.push_back(&g);
  // The bound is reserved up front: the bytes are allocated once.
  EXPECT_GE(encoded_ensemble_size(e.weights, ptrs), alone.size());
  EXPECT_EQ(alone.capacity(), encoded_ensemble_size(e.weights, ptrs));
  // The checksum covers the ensemble's own bytes, not what precedes them.
  ByteWriter w;
  w.put_string("a message header");
  const std::size_t start = w.size();
  encode_ensemble_to(w, e.shape, e.cell, e.weights, ptrs);
  const std::vector<std::uint8_t> in_place(w.bytes().begin() + static_cast<std::ptrdiff_t>(start), w.bytes().end());
  EXPECT_EQ(in_place, alone);
  Ensemble back = Ensemble::decode(in_place, "in place");
  EXPECT_EQ(back.weights, e.weights);
  EXPECT_TRUE(torch::equal(back.sample(40, 9), e.sample(40, 9)));
}

TEST(Ensemble, SaveLoadRoundTripAndCorruptionIsDetected) {
  Ensemble e = make_ensemble(2);
  e.weights = {0.7, 0.3};
  const auto dir = std::filesystem::temp_directory_path() / ("ensemble_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ensemble.bin").string();
  e.save(path);
  Ensemble loaded = Ensemble::load(path);
  EXPECT_EQ(loaded.cell, 2);
  EXPECT_EQ(loaded.weights, e.weights);
  EXPECT_TRUE(torch::equal(loaded.sample(50, 3), e.sample(50, 3)));

  // The network depth is part of the file.
  Ensemble deep = make_ensemble(1, /*toy_layers=*/4);
  deep.save(path);
  Ensemble deep_loaded = Ensemble::load(path);
  EXPECT_EQ(deep_loaded.shape.toy_layers, 4);
  EXPECT_TRUE(torch::equal(deep_loaded.sample(50, 3), deep.sample(50, 3)));
  e.save(path);

  // Flip one byte in the middle: the checksum catches it.
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes[bytes.size() / 2] ^= 0x5a;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    Ensemble::load(path);
    FAIL() << "a corrupt file loaded";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find(path), std::string::npos);
  }
  // Truncated.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), 100);
  }
  EXPECT_THROW(Ensemble::load(path), InputError);
  EXPECT_THROW(Ensemble::load((dir / "missing.bin").string()), InputError);
  std::filesystem::remove_all(dir);
}

// A folder or a device given as the ensemble is one line naming it (a
// folder used to fail with exit 1; /dev/zero never ended).
TEST(Ensemble, AFolderOrADeviceIsNotAnEnsemble) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  try {
    Ensemble::load(dir);
    FAIL() << "a folder loaded";
  } catch (const InputError& err) {
    EXPECT_EQ(std::string(err.what()), dir + ": is a folder: expected an ensemble.bin");
  }
  try {
    Ensemble::load("/dev/zero");
    FAIL() << "a device loaded";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("/dev/zero: is not a regular file"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace cellgan
