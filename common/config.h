// Configuration: documented structs, parsed once from YAML, validated once,
// then passed by const& (docs/configuration.md lists the keys).
//
// Every key below is the YAML key of the same name inside its section. An
// unknown key, a wrong type or a value out of range throws InputError whose
// message names the file and the key ("configs/x.yaml: training.loss: ...").
// Defaults are Lipizzaner's MNIST settings (SPEC §3) unless noted.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>

namespace cellgan {

enum class DatasetKind { kMnist, kFashion, kIdx, kRing, kGrid };
enum class NetworkKind { kMlp, kDcgan, kToy };
enum class NeighbourhoodKind { kVonNeumann, kMoore };
enum class LossKind { kBce, kMse, kHeuristic, kMustangs };
enum class ReplacementRule { kIfBetter, kAlways };

struct DataConfig {
  // mnist | fashion | idx | ring | grid.
  DatasetKind dataset = DatasetKind::kMnist;
  // Folder of IDX files (train-images-idx3-ubyte[.gz] and the rest).
  // Defaults: mnist -> "data/mnist" (made by deploy/prepare-data.sh),
  // fashion -> "/usr/share/datasets/fashion-mnist", idx -> required,
  // ring/grid -> unused (generated in code).
  std::string path;
  // Use only the first N training images (0 = all). For quick runs.
  std::int64_t train_limit = 0;
  // Toy data only: training points generated per cell.
  std::int64_t toy_samples = 10000;
};

struct NetworkConfig {
  // mlp (Lipizzaner's four-layer perceptron) | dcgan | toy (2-D data).
  NetworkKind kind = NetworkKind::kMlp;
  // Size of the latent vector z ~ N(0, 1).
  std::int64_t latent_dim = 64;
  // Hidden width of the toy MLPs.
  std::int64_t toy_hidden = 64;
  // Hidden layers of the toy MLPs (both G and D).
  std::int64_t toy_layers = 2;
};

struct GridConfig {
  // Any R x C >= 1 x 1, square or not.
  std::int64_t rows = 2;
  std::int64_t cols = 2;
  // von_neumann (5 cells on 3x3 and larger) | moore (9 cells).
  NeighbourhoodKind neighbourhood = NeighbourhoodKind::kVonNeumann;
};

struct TrainingConfig {
  std::int64_t generations = 10;
  // Generators and discriminators per cell.
  std::int64_t population_size = 1;
  std::int64_t tournament_size = 2;
  std::int64_t batch_size = 100;
  // Batches per generation; 0 means one epoch of the training data.
  std::int64_t batches_per_generation = 0;
  double learning_rate = 2e-4;
  double adam_beta1 = 0.5;
  double adam_beta2 = 0.999;
  // bce | mse | heuristic | mustangs.
  LossKind loss = LossKind::kBce;
  // Discriminators step on every (skip+1)-th batch.
  std::int64_t discriminator_skip = 1;
  // Weight gamma of the R1 gradient penalty on the discriminators' real
  // batches, (gamma / 2) * mean ||grad_x D(x)||^2; 0 = off (Lipizzaner has none).
  double r1_penalty = 0.0;
  // Learning-rate mutation: with probability p, lr += scale * N(-lr0/10, lr0).
  double mutation_probability = 0.5;
  double mutation_scale = 1e-4;
  // if_better (Lipizzaner's) | always. See SPEC §3 step 6.
  ReplacementRule replacement = ReplacementRule::kAlways;
  std::int64_t n_replacements = 1;
  // Step size of the mixture-weight (1+1)-ES.
  double mixture_sigma = 0.01;
  // Real (and generated) samples used for fitness.
  std::int64_t fitness_samples = 1000;
  // Generated samples used for the per-generation mixture score.
  std::int64_t score_samples = 1000;
};

struct EvaluationConfig {
  // Saved score classifier (cellgan classifier). Required for image data;
  // default "<data path>/classifier.pt".
  std::string classifier;
  // Samples the master scores each cell's final ensemble on.
  std::int64_t final_samples = 10000;
  // Images in the PNG sample grid written at the end.
  std::int64_t grid_images = 100;
  // Every this many generations the master writes previews/gen-NNNNNN.png:
  // the samples the generation's best cell scored its mixture on (the
  // first grid_images of them for images, all for toy data). 0 = never.
  std::int64_t preview_every = 10;
  // Also score the grid-wide ensemble (every cell's own generators, equal
  // weights) against the cell ensembles; the best of all is the result.
  bool grid_ensemble = true;
};

struct RuntimeConfig {
  // Torch intra-op threads per rank. Keep 1 when ranks share cores.
  std::int64_t threads = 1;
  std::int64_t heartbeat_interval_ms = 500;
  // A worker silent this long is reported late (events.log), then dead.
  std::int64_t late_after_ms = 10000;
  std::int64_t dead_after_ms = 60000;
  // debug | info | warn | error.
  std::string log_level = "info";
};

struct Config {
  std::uint64_t seed = 1;
  // The run directory; must not hold a finished run (SPEC §9).
  std::string output_dir = "runs/default";
  DataConfig data;
  NetworkConfig network;
  GridConfig grid;
  TrainingConfig training;
  EvaluationConfig evaluation;
  RuntimeConfig runtime;

  // Where the YAML came from, for error messages.
  std::string source = "<config>";
};

// Parses and validates. Throws InputError naming `path` and the key.
Config load_config(const std::string& path);
// The same, from YAML text; `source` names it in error messages.
Config parse_config(const std::string& yaml_text, const std::string& source);
// The fully resolved configuration as YAML (every key, defaults included).
std::string to_yaml(const Config& config);

// Names, for logs and files.
const char* to_string(DatasetKind kind);
const char* to_string(NetworkKind kind);
const char* to_string(NeighbourhoodKind kind);
const char* to_string(LossKind kind);
const char* to_string(ReplacementRule rule);

// True for the 2-D toy mixtures.
inline bool is_toy(DatasetKind kind) { return kind == DatasetKind::kRing || kind == DatasetKind::kGrid; }

// The 28x28 images every image dataset holds: side and pixels per image.
inline constexpr std::int64_t kImageSide = 28;
inline constexpr std::int64_t kImageDim = kImageSide * kImageSide;
// Values per sample: 2 for the toy mixtures, one per pixel for images.
inline std::int64_t sample_dim(DatasetKind kind) { return is_toy(kind) ? 2 : kImageDim; }

}  // namespace cellgan
