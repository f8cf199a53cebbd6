// Tests of common/config.h: the shipped configs, the defaults, the input errors and the to_yaml round trip.
#include "common/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <regex>
#include <string>
#include <vector>

#include "common/config_keys.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;
using test::TempDir;
using test::write_bytes;

// The InputError message of parsing `yaml` as `source`.
std::string parse_error(const std::string& yaml, const std::string& source = "configs/bad.yaml") {
  return input_error_of([&] { parse_config(yaml, source); });
}

// Expects `message` to be one line holding every one of `parts`.
void expect_mentions(const std::string& message, std::initializer_list<std::string> parts) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing in: " << message;
}

// Every key of the tables has the same value in `a` and `b`.
void expect_same(const Config& a, const Config& b) {
  EXPECT_EQ(config_differences(a, b), std::vector<std::string>{});
}

// ---------------------------------------------------------------- shipped configs

// Every configs/*.yaml and the multi-rank tests' tests/mpi/toy-2x2.yaml.
TEST(Config, EveryShippedConfigLoads) {
  const std::filesystem::path source = CELLGAN_SOURCE_DIR;
  const std::filesystem::path dir = source / "configs";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  ASSERT_FALSE(files.empty()) << "no .yaml file in " << dir;
  files.push_back(source / "tests" / "mpi" / "toy-2x2.yaml");

  const std::regex grid_in_name(R"(-(\d+)x(\d+)$)");
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    Config c;
    try {
      c = load_config(file.string());
    } catch (const InputError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_EQ(c.source, file.string());
    EXPECT_FALSE(c.output_dir.empty());
    // A name such as mnist-3x3.yaml promises a 3 x 3 grid.
    std::smatch m;
    const std::string stem = file.stem().string();
    if (std::regex_search(stem, m, grid_in_name)) {
      EXPECT_EQ(c.grid.rows, std::stoll(m[1].str()));
      EXPECT_EQ(c.grid.cols, std::stoll(m[2].str()));
    }
    // What the run directory will hold must load again.
    Config again;
    EXPECT_NO_THROW(again = parse_config(to_yaml(c), "resolved.yaml"));
    expect_same(c, again);
  }
}

// ---------------------------------------------------------------- defaults

void expect_lipizzaner_mnist(const Config& c) {
  EXPECT_EQ(c.data.dataset, DatasetKind::kMnist);
  EXPECT_EQ(c.network.kind, NetworkKind::kMlp);
  EXPECT_EQ(c.training.batch_size, 100);
  EXPECT_EQ(c.training.population_size, 1);
  EXPECT_EQ(c.training.tournament_size, 2);
  EXPECT_DOUBLE_EQ(c.training.learning_rate, 2e-4);
  EXPECT_DOUBLE_EQ(c.training.adam_beta1, 0.5);
  EXPECT_DOUBLE_EQ(c.training.adam_beta2, 0.999);
  EXPECT_DOUBLE_EQ(c.training.mutation_probability, 0.5);
  EXPECT_DOUBLE_EQ(c.training.mutation_scale, 1e-4);
  EXPECT_EQ(c.training.discriminator_skip, 1);
  EXPECT_DOUBLE_EQ(c.training.r1_penalty, 0.0);  // Lipizzaner has no gradient penalty
  EXPECT_DOUBLE_EQ(c.training.mixture_sigma, 0.01);
  EXPECT_EQ(c.training.fitness_samples, 1000);
  EXPECT_EQ(c.training.score_samples, 1000);
  EXPECT_EQ(c.training.loss, LossKind::kBce);
}

TEST(Config, DefaultsAreLipizzanersMnistSettings) { expect_lipizzaner_mnist(Config{}); }

TEST(Config, KeysLeftOutKeepTheirDefaults) {
  const Config c = parse_config("seed: 7\ntraining:\n  generations: 3\n", "short.yaml");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.training.generations, 3);
  EXPECT_EQ(c.source, "short.yaml");
  expect_lipizzaner_mnist(c);
  EXPECT_EQ(c.output_dir, Config{}.output_dir);
  EXPECT_EQ(c.grid.rows, GridConfig{}.rows);
  EXPECT_EQ(c.runtime.dead_after_ms, RuntimeConfig{}.dead_after_ms);
}

TEST(Config, ValuesGivenAreRead) {
  const Config c = parse_config(
      "output_dir: runs/x\n"
      "data: {dataset: ring, toy_samples: 500}\n"
      "network: {kind: toy, latent_dim: 3}\n"
      "grid: {rows: 2, cols: 5, neighbourhood: moore}\n"
      "training: {loss: mustangs, learning_rate: 0.003, replacement: if_better}\n"
      "evaluation: {grid_ensemble: false}\n"
      "runtime: {log_level: debug}\n",
      "given.yaml");
  EXPECT_EQ(c.output_dir, "runs/x");
  EXPECT_EQ(c.data.dataset, DatasetKind::kRing);
  EXPECT_EQ(c.data.toy_samples, 500);
  EXPECT_EQ(c.network.kind, NetworkKind::kToy);
  EXPECT_EQ(c.network.latent_dim, 3);
  EXPECT_EQ(c.grid.rows, 2);
  EXPECT_EQ(c.grid.cols, 5);
  EXPECT_EQ(c.grid.neighbourhood, NeighbourhoodKind::kMoore);
  EXPECT_EQ(c.training.loss, LossKind::kMustangs);
  EXPECT_DOUBLE_EQ(c.training.learning_rate, 0.003);
  EXPECT_EQ(c.training.replacement, ReplacementRule::kIfBetter);
  EXPECT_FALSE(c.evaluation.grid_ensemble);
  EXPECT_TRUE(Config{}.evaluation.grid_ensemble);
  EXPECT_EQ(c.runtime.log_level, "debug");
}

// ---------------------------------------------------------------- bad input

TEST(ConfigErrors, UnknownTopLevelKey) {
  expect_mentions(parse_error("seed: 1\nsede: 2\n"), {"configs/bad.yaml", "sede", "unknown key"});
}

TEST(ConfigErrors, UnknownKeyInsideASection) {
  expect_mentions(parse_error("training:\n  generations: 3\n  lerning_rate: 0.1\n"),
                  {"configs/bad.yaml", "training.lerning_rate", "unknown key"});
  expect_mentions(parse_error("runtime:\n  thread: 2\n"), {"configs/bad.yaml", "runtime.thread"});
}

TEST(ConfigErrors, DuplicateKey) {
  expect_mentions(parse_error("seed: 1\nseed: 2\n"), {"configs/bad.yaml", "seed", "duplicate key"});
  expect_mentions(parse_error("training:\n  batch_size: 3\n  batch_size: 4\n"),
                  {"configs/bad.yaml", "training.batch_size", "duplicate key"});
}

TEST(ConfigErrors, WrongType) {
  expect_mentions(parse_error("training:\n  generations: \"ten\"\n"),
                  {"configs/bad.yaml", "training.generations", "ten"});
  expect_mentions(parse_error("training:\n  learning_rate: fast\n"), {"configs/bad.yaml", "training.learning_rate"});
  expect_mentions(parse_error("grid:\n  rows: [1, 2]\n"), {"configs/bad.yaml", "grid.rows"});
  expect_mentions(parse_error("training: 5\n"), {"configs/bad.yaml", "training"});
  expect_mentions(parse_error("seed: -1\n"), {"configs/bad.yaml", "seed"});
  expect_mentions(parse_error("evaluation:\n  grid_ensemble: maybe\n"),
                  {"configs/bad.yaml", "evaluation.grid_ensemble", "a boolean"});
}

TEST(ConfigErrors, OutOfRange) {
  expect_mentions(parse_error("grid:\n  rows: 0\n"), {"configs/bad.yaml", "grid.rows"});
  expect_mentions(parse_error("grid:\n  cols: -3\n"), {"configs/bad.yaml", "grid.cols"});
  expect_mentions(parse_error("training:\n  population_size: 2\n  n_replacements: 3\n"),
                  {"configs/bad.yaml", "training.n_replacements"});
  expect_mentions(parse_error("training:\n  r1_penalty: -0.5\n"), {"configs/bad.yaml", "training.r1_penalty", "in [0, 1000]"});
  expect_mentions(parse_error("evaluation:\n  preview_every: -1\n"),
                  {"configs/bad.yaml", "evaluation.preview_every", "0..1000000"});
  expect_mentions(parse_error("runtime:\n  late_after_ms: 1000\n  dead_after_ms: 1000\n"),
                  {"configs/bad.yaml", "runtime.dead_after_ms"});
}

TEST(ConfigErrors, EnumValueNotInTheList) {
  expect_mentions(parse_error("training:\n  loss: hinge\n"), {"configs/bad.yaml", "training.loss", "hinge"});
  expect_mentions(parse_error("grid:\n  neighbourhood: hex\n"), {"configs/bad.yaml", "grid.neighbourhood", "hex"});
  expect_mentions(parse_error("runtime:\n  log_level: loud\n"), {"configs/bad.yaml", "runtime.log_level", "loud"});
  expect_mentions(parse_error("runtime:\n  cuda_graphs: maybe\n"),
                  {"configs/bad.yaml", "runtime.cuda_graphs", "maybe"});
}

TEST(ConfigErrors, CudaGraphsOnNeedsAGpu) {
  expect_mentions(parse_error("runtime:\n  device: cpu\n  cuda_graphs: on\n"),
                  {"configs/bad.yaml", "runtime.cuda_graphs", "GPU"});
  EXPECT_EQ(parse_config("runtime:\n  device: cpu\n  cuda_graphs: off\n", "ok.yaml").runtime.cuda_graphs, "off");
  EXPECT_EQ(parse_config("runtime:\n  cuda_graphs: on\n", "ok.yaml").runtime.cuda_graphs, "on");
  EXPECT_EQ(Config{}.runtime.cuda_graphs, "off");
}

TEST(ConfigErrors, IdxDatasetNeedsAPath) {
  expect_mentions(parse_error("data:\n  dataset: idx\n"), {"configs/bad.yaml", "data.path"});
  const Config c = parse_config("data:\n  dataset: idx\n  path: /some/folder\n", "ok.yaml");
  EXPECT_EQ(c.data.dataset, DatasetKind::kIdx);
  EXPECT_EQ(c.data.path, "/some/folder");
}

TEST(ConfigErrors, ToyDataAndNetworkGoTogether) {
  expect_mentions(parse_error("data:\n  dataset: ring\nnetwork:\n  kind: mlp\n"), {"configs/bad.yaml", "network.kind"});
  expect_mentions(parse_error("data:\n  dataset: grid\n"), {"configs/bad.yaml", "network.kind"});
  expect_mentions(parse_error("network:\n  kind: toy\n"), {"configs/bad.yaml", "network.kind"});
}

TEST(ConfigErrors, InvalidYamlNamesTheSourceAndALine) {
  // A second ':' in a plain value, on line 3.
  expect_mentions(parse_error("seed: 1\ngrid:\n  rows: 2: 3\n", "colon.yaml"), {"colon.yaml", "line 3"});
  // A tab used for indentation, on line 2.
  expect_mentions(parse_error("seed: 1\n\tgrid: 2\n", "tab.yaml"), {"tab.yaml", "line 2"});
  // An unclosed flow mapping: reported where the text ends.
  const std::string message = parse_error("seed: 1\noutput_dir: runs/a\ndata: {dataset: \"mnist\n", "open.yaml");
  expect_mentions(message, {"open.yaml"});
  EXPECT_TRUE(std::regex_search(message, std::regex(R"(line [1-9][0-9]*)"))) << message;
}

TEST(ConfigErrors, EmptyFile) {
  expect_mentions(parse_error("", "empty.yaml"), {"empty.yaml"});
  expect_mentions(parse_error("# only a comment\n\n", "comment.yaml"), {"comment.yaml"});
}

TEST(ConfigErrors, NotAMapping) {
  expect_mentions(parse_error("just a string\n", "scalar.yaml"), {"scalar.yaml"});
  expect_mentions(parse_error("- a\n- b\n", "list.yaml"), {"list.yaml"});
}

// "training:" with nothing under it used to read as the defaults of the
// whole section; a section present is a mapping, or an error naming it.
TEST(ConfigErrors, ASectionThatIsNullIsAnErrorNamingIt) {
  for (const ConfigSection& section : config_sections()) {
    if (section.name.empty()) continue;
    for (const std::string value : {"", " null", " ~"})
      expect_mentions(parse_error("seed: 1\n" + section.name + ":" + value + "\n"),
                      {"configs/bad.yaml: " + section.name + ": null: expected a mapping"});
  }
  expect_mentions(parse_error("training: [1, 2]\n"), {"configs/bad.yaml: training: expected a mapping"});
}

// Bytes that are not printable UTF-8 in the echoed input come out as \xNN;
// printable UTF-8 comes out as it is.
TEST(ConfigErrors, UnprintableBytesOfTheInputAreEscaped) {
  const auto expect_printable = [](const std::string& message) {
    for (const char ch : message) {
      const auto byte = static_cast<unsigned char>(ch);
      EXPECT_TRUE(byte >= 0x20 && byte < 0x7f) << "byte " << int(byte) << " in: " << message;
    }
  };
  const std::string key = parse_error("seed: 1\n\xff\xfe: 3\n");
  expect_mentions(key, {"configs/bad.yaml: \\xFF\\xFE: unknown key"});
  expect_printable(key);
  const std::string value = parse_error("seed: \"\xff\x01\"\n");
  expect_mentions(value, {"seed: expected a non-negative integer, got '\\xFF\\x01'"});
  expect_printable(value);
  const std::string escape = parse_error("training:\n  loss: \"\x1b[31mred\"\n", "a\tb.yaml");
  expect_mentions(escape, {"a\\x09b.yaml: training.loss: '\\x1B[31mred' is not one of"});
  expect_printable(escape);
  expect_mentions(parse_error("training:\n  loss: \"\xc3\xa9\"\n"), {"'\xc3\xa9' is not one of"});  // é
  // A file of random-looking bytes: still one printable line.
  TempDir dir;
  const std::string path = dir.file("garbage.yaml");
  const char bytes[] = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe: [\x80\x81";
  write_bytes(path, std::string(bytes, sizeof bytes - 1));
  const std::string garbage = input_error_of([&] { load_config(path); });
  expect_mentions(garbage, {path});
  expect_printable(garbage);
}

TEST(ConfigErrors, MissingFileNamesThePath) {
  TempDir dir;
  const std::string path = dir.file("no-such-config.yaml");
  expect_mentions(input_error_of([&] { load_config(path); }), {path});
}

TEST(ConfigErrors, LoadConfigNamesTheFileInParseErrors) {
  TempDir dir;
  const std::string path = dir.file("typo.yaml");
  write_bytes(path, "grid:\n  rows: 2\n  colls: 2\n");
  expect_mentions(input_error_of([&] { load_config(path); }), {path, "grid.colls"});
}

// ---------------------------------------------------------------- to_yaml

// Values YAML must quote or print in full: the largest seed, ': #' in a
// path, a third. (Every key with a non-default value: config_keys_test.cpp.)
TEST(ConfigYaml, RoundTripOfAwkwardValues) {
  Config c;
  c.seed = 18446744073709551615ULL;
  c.output_dir = "runs/odd dir: #1";
  c.data.dataset = DatasetKind::kIdx;
  c.data.path = "/data/'some' \"idx\"";
  c.training.mutation_scale = 1.0 / 3.0;
  c.training.learning_rate = 3.3e-4;
  const Config back = parse_config(to_yaml(c), "round-trip.yaml");
  expect_same(c, back);
  EXPECT_EQ(back.source, "round-trip.yaml");
}

TEST(ConfigYaml, RoundTripOfAToyConfig) {
  Config c;
  c.data.dataset = DatasetKind::kGrid;
  c.network.kind = NetworkKind::kToy;
  c.training.loss = LossKind::kMse;
  c.runtime.log_level = "error";
  expect_same(c, parse_config(to_yaml(c), "toy.yaml"));
}

TEST(ConfigYaml, RoundTripOfTheDefaults) {
  const Config c;
  expect_same(c, parse_config(to_yaml(c), "defaults.yaml"));
}

}  // namespace
}  // namespace cellgan
