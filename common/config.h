// Configuration: documented structs, parsed once from YAML, validated once,
// then passed by const& (docs/configuration.md lists the keys).
//
// Every member below is the YAML key of the same name inside its section
// (the members of Config itself are the top level). Its initializer is the
// key's default: Lipizzaner's MNIST settings (docs/architecture.md, "One generation of one cell") unless noted. Its
// type, allowed values and meaning are written once, in the section's table
// in config_keys.cpp, which also drives parsing, to_yaml and comparison; the
// tables are rendered in docs/configuration.md.
//
// An unknown key, a duplicate key, a wrong type or a value out of range
// throws InputError whose one-line message names the file and the key
// ("configs/x.yaml: training.loss: ...").
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/fault_plan.h"

namespace cellgan {

enum class LayoutKind { kCoevolution, kDataParallel, kPerClass };
enum class DatasetKind { kMnist, kFashion, kIdx, kRing, kGrid };
enum class NetworkKind { kMlp, kDcgan, kToy, kSngan, kDcganConditional };
enum class NeighbourhoodKind { kVonNeumann, kMoore };
enum class LossKind { kBce, kMse, kHeuristic, kMustangs, kWganGp };
enum class ReplacementRule { kIfBetter, kAlways };
// How a coevolution worker takes its neighbours' centres each generation
// (worker/coevolution_layout.h).
enum class ExchangeMode { kSync, kAsync };
// How BCE takes the log of a discriminator output p (common/nn/losses.h).
enum class BceForm { kClamped, kPyTorch };
// The precision of training's forward passes (common/nn/precision.h).
enum class Precision { kFp32, kBf16, kFp16 };
enum class AllreduceKind { kRing, kReduceBroadcast, kMpi, kNccl };
enum class WireCompression { kNone, kFp16, kBf16 };
enum class BatchScaling { kWeak, kStrong };
// How the data-parallel all-reduce spans nodes (worker/two_level_allreduce.h).
enum class AllreduceHierarchy { kFlat, kTwoLevel, kAuto };

struct DataConfig {
  DatasetKind dataset = DatasetKind::kMnist;
  std::string path;  // empty: the dataset's folder (dataset_folder() in dataset.h)
  std::int64_t train_limit = 0;
  std::int64_t toy_samples = 10000;
};

struct NetworkConfig {
  NetworkKind kind = NetworkKind::kMlp;
  std::int64_t latent_dim = 64;
  std::int64_t toy_hidden = 64;
  std::int64_t toy_layers = 2;
};

struct GridConfig {
  std::int64_t rows = 2;
  std::int64_t cols = 2;
  NeighbourhoodKind neighbourhood = NeighbourhoodKind::kVonNeumann;
  ExchangeMode exchange = ExchangeMode::kSync;
  std::int64_t async_lag = 2;  // exchange async only
};

struct TrainingConfig {
  std::int64_t generations = 10;
  std::int64_t population_size = 1;
  std::int64_t tournament_size = 2;
  std::int64_t batch_size = 100;
  std::int64_t batches_per_generation = 0;
  double learning_rate = 2e-4;
  double adam_beta1 = 0.5;
  double adam_beta2 = 0.999;
  LossKind loss = LossKind::kBce;
  BceForm bce = BceForm::kPyTorch;
  Precision precision = Precision::kFp32;
  std::int64_t discriminator_skip = 1;
  double r1_penalty = 0.0;
  double gp_lambda = 10.0;    // loss wgan_gp only
  std::int64_t n_critic = 5;  // loss wgan_gp only
  double mutation_probability = 0.5;
  double mutation_scale = 1e-4;
  bool mutated_lr_reaches_adam = true;
  ReplacementRule replacement = ReplacementRule::kAlways;
  std::int64_t n_replacements = 1;
  double mixture_sigma = 0.01;
  std::int64_t fitness_samples = 1000;
  std::int64_t score_samples = 1000;
};

struct EvaluationConfig {
  std::string classifier;  // empty: <data path>/classifier.pt
  std::int64_t final_samples = 10000;
  std::int64_t grid_images = 100;
  std::int64_t preview_every = 10;
  bool grid_ensemble = true;
};

struct RuntimeConfig {
  std::int64_t threads = 1;
  std::int64_t heartbeat_interval_ms = 500;
  std::int64_t late_after_ms = 2000;
  std::int64_t dead_after_ms = 5000;
  std::string log_level = "info";
  // auto | cpu | cuda | cuda:0..cuda:15 (common/nn/device.h).
  std::string device = "auto";
  // auto | on | off: lockstep steps captured as CUDA graphs (common/nn/cuda_step_graph.h).
  std::string cuda_graphs = "off";  // until graphs have been checked on a GPU
};

// True for the forms runtime.device and --device take: auto, cpu, cuda or
// cuda:N (N a GPU index, 0..1023).
bool is_device_spec(const std::string& spec);

struct CheckpointConfig {
  std::int64_t every = 5;
  std::int64_t keep = 2;
};

struct StatusConfig {
  std::int64_t port = 0;  // 0: no status server
  std::string bind = "127.0.0.1";
};

// layout: data_parallel (worker/data_parallel_layout.h).
struct DataParallelConfig {
  AllreduceKind allreduce = AllreduceKind::kRing;
  std::int64_t fusion_bytes = 64LL << 20;  // Horovod's default fusion buffer
  WireCompression compression = WireCompression::kNone;
  std::int64_t accumulate_steps = 1;
  double clip_grad_norm = 0.0;
  BatchScaling scaling = BatchScaling::kWeak;
  AllreduceHierarchy hierarchy = AllreduceHierarchy::kAuto;
  std::int64_t ranks_per_node = 0;  // 0: the workers' host names say
  AllreduceKind across_nodes = AllreduceKind::kRing;  // nccl two_level: the leaders' algorithm (not nccl)
  bool shard_optimizer = false;     // ZeRO stage 1 (worker/sharded_adam.h)
};

struct Config {
  std::uint64_t seed = 1;
  std::string output_dir = "runs/default";
  LayoutKind layout = LayoutKind::kCoevolution;
  DataConfig data;
  NetworkConfig network;
  GridConfig grid;
  TrainingConfig training;
  EvaluationConfig evaluation;
  RuntimeConfig runtime;
  CheckpointConfig checkpoint;
  StatusConfig status;
  DataParallelConfig data_parallel;
  // `faults:`, a list (common/fault_plan.h), after the sections; not a
  // table. Empty by default. parse_config checks each fault's cell and gen
  // against the grid and training.generations; its rank is checked against
  // the worker count when the job starts.
  std::vector<Fault> faults;

  // Where the YAML came from, for error messages. Not a key.
  std::string source = "<config>";
};

// Parses and validates. Throws InputError naming `path` and the key. A
// section present but null or not a mapping ("training:" with nothing under
// it, "--set training=null") is an error, not its defaults. Every message
// is one line: what it echoes of the input (the path, a key, a value, a
// setting) has its unprintable and non-UTF-8 bytes written as \xNN
// (common/printable.h).
Config load_config(const std::string& path);
// The same, with `settings` ("grid.rows=3", "seed=7": `cellgan train
// --set`) replacing or adding keys of the file before it is validated; a
// value is YAML ("faults=[]"). Errors name the file "PATH (with --set)".
// Throws InputError for a setting that is not KEY=VALUE.
Config load_config(const std::string& path, const std::vector<std::string>& settings);
// The YAML text with `settings` applied (as above); `source` names it.
std::string apply_settings(const std::string& yaml_text, const std::vector<std::string>& settings,
                           const std::string& source);
// The same, from YAML text; `source` names it in error messages.
Config parse_config(const std::string& yaml_text, const std::string& source);
// The fully resolved configuration as YAML (every key, defaults included),
// in the order of the tables; parse_config reads it back to the same keys.
std::string to_yaml(const Config& config);

// Every key whose value differs between `a` and `b`, one line each
// ("training.batch_size: 100 vs 64"); empty if none. `source` is not a key.
std::vector<std::string> config_differences(const Config& a, const Config& b);
// Whether a difference of config_differences() is one a resumed run may
// have: output_dir (a run folder may be moved), runtime.*, checkpoint.*,
// status.*, faults (none changes a result) and training.generations (the
// run goes on to the new count).
bool may_change_on_resume(const std::string& difference);
// Every key has the same value in `a` and `b`.
bool same_config(const Config& a, const Config& b);

// Names, for logs and files.
const char* to_string(LayoutKind kind);
const char* to_string(DatasetKind kind);
const char* to_string(NetworkKind kind);
const char* to_string(NeighbourhoodKind kind);
const char* to_string(LossKind kind);
const char* to_string(ReplacementRule rule);
const char* to_string(AllreduceKind kind);
const char* to_string(WireCompression compression);
const char* to_string(BatchScaling scaling);
const char* to_string(AllreduceHierarchy hierarchy);
const char* to_string(Precision precision);

// True for the 2-D toy mixtures.
inline bool is_toy(DatasetKind kind) { return kind == DatasetKind::kRing || kind == DatasetKind::kGrid; }

// The 28x28 images every image dataset holds: side and pixels per image.
inline constexpr std::int64_t kImageSide = 28;
inline constexpr std::int64_t kImageDim = kImageSide * kImageSide;
// The classes (labels 0..9) every image dataset has.
inline constexpr std::int64_t kClassCount = 10;
// Values per sample: 2 for the toy mixtures, one per pixel for images.
inline std::int64_t sample_dim(DatasetKind kind) { return is_toy(kind) ? 2 : kImageDim; }

}  // namespace cellgan
