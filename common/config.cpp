// Parsing and validating the YAML configuration (see config.h).
#include "common/config.h"

#include <yaml-cpp/yaml.h>

#include <fmt/core.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"

namespace cellgan {
namespace {

// Reads the keys of one YAML mapping into fields, remembering which keys
// were consumed so that unknown keys can be reported by name.
class Section {
 public:
  Section(const YAML::Node& node, std::string prefix, const std::string& source)
      : node_(node), prefix_(std::move(prefix)), source_(source) {
    if (node_ && !node_.IsNull() && !node_.IsMap()) fail("", "expected a mapping");
  }

  template <typename T>
  void read(const std::string& key, T& out) {
    seen_.insert(key);
    if (!node_ || node_.IsNull()) return;
    const YAML::Node value = node_[key];
    if (!value) return;
    if (!value.IsScalar()) fail(key, fmt::format("expected {}", type_name<T>()));
    try {
      out = value.as<T>();
    } catch (const YAML::Exception&) {
      fail(key, fmt::format("expected {}, got '{}'", type_name<T>(), value.Scalar()));
    }
  }

  template <typename E>
  void read_enum(const std::string& key, E& out, const std::map<std::string, E>& names) {
    std::string text;
    bool present = node_ && !node_.IsNull() && node_[key];
    read(key, text);
    if (!present) return;
    auto it = names.find(text);
    if (it == names.end()) {
      std::string options;
      for (const auto& [name, value] : names) options += (options.empty() ? "" : ", ") + name;
      fail(key, fmt::format("'{}' is not one of {}", text, options));
    }
    out = it->second;
  }

  YAML::Node child(const std::string& key) {
    seen_.insert(key);
    if (!node_ || node_.IsNull()) return YAML::Node();
    return node_[key];
  }

  void reject_unknown() const {
    if (!node_ || node_.IsNull()) return;
    std::set<std::string> keys;
    for (const auto& kv : node_) {
      const std::string key = kv.first.as<std::string>();
      if (!keys.insert(key).second) fail(key, "duplicate key");
      if (!seen_.count(key)) fail(key, "unknown key");
    }
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    std::string path = prefix_;
    if (!key.empty()) path += (path.empty() ? "" : ".") + key;
    throw InputError(fmt::format("{}: {}: {}", source_, path.empty() ? "<top>" : path, what));
  }

 private:
  template <typename T>
  static const char* type_name() {
    if constexpr (std::is_same_v<T, std::string>) return "a string";
    else if constexpr (std::is_same_v<T, bool>) return "a boolean";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else if constexpr (std::is_unsigned_v<T>) return "a non-negative integer";
    else return "an integer";
  }

  YAML::Node node_;
  std::string prefix_;
  const std::string& source_;
  std::set<std::string> seen_;
};

template <typename T>
void require(bool ok, const Section& s, const std::string& key, T value, const char* expected) {
  if (!ok) s.fail(key, fmt::format("{} is out of range: expected {}", value, expected));
}

const std::map<std::string, DatasetKind> kDatasets = {{"mnist", DatasetKind::kMnist},
                                                      {"fashion", DatasetKind::kFashion},
                                                      {"idx", DatasetKind::kIdx},
                                                      {"ring", DatasetKind::kRing},
                                                      {"grid", DatasetKind::kGrid}};
const std::map<std::string, NetworkKind> kNetworks = {
    {"mlp", NetworkKind::kMlp}, {"dcgan", NetworkKind::kDcgan}, {"toy", NetworkKind::kToy}};
const std::map<std::string, NeighbourhoodKind> kNeighbourhoods = {{"von_neumann", NeighbourhoodKind::kVonNeumann},
                                                                  {"moore", NeighbourhoodKind::kMoore}};
const std::map<std::string, LossKind> kLosses = {{"bce", LossKind::kBce},
                                                 {"mse", LossKind::kMse},
                                                 {"heuristic", LossKind::kHeuristic},
                                                 {"mustangs", LossKind::kMustangs}};
const std::map<std::string, ReplacementRule> kRules = {{"if_better", ReplacementRule::kIfBetter},
                                                       {"always", ReplacementRule::kAlways}};

template <typename E>
const char* name_of(const std::map<std::string, E>& names, E value) {
  for (const auto& [name, v] : names)
    if (v == value) return name.c_str();
  return "?";
}

void parse_data(Section s, DataConfig& d) {
  s.read_enum("dataset", d.dataset, kDatasets);
  s.read("path", d.path);
  s.read("train_limit", d.train_limit);
  s.read("toy_samples", d.toy_samples);
  s.reject_unknown();
  require(d.train_limit >= 0, s, "train_limit", d.train_limit, ">= 0 (0 = all)");
  require(d.toy_samples >= 100, s, "toy_samples", d.toy_samples, ">= 100");
  if (d.dataset == DatasetKind::kIdx && d.path.empty()) s.fail("path", "required when data.dataset is idx");
}

void parse_network(Section s, NetworkConfig& n) {
  s.read_enum("kind", n.kind, kNetworks);
  s.read("latent_dim", n.latent_dim);
  s.read("toy_hidden", n.toy_hidden);
  s.read("toy_layers", n.toy_layers);
  s.reject_unknown();
  require(n.latent_dim >= 1, s, "latent_dim", n.latent_dim, ">= 1");
  require(n.toy_hidden >= 1, s, "toy_hidden", n.toy_hidden, ">= 1");
  require(n.toy_layers >= 1 && n.toy_layers <= 16, s, "toy_layers", n.toy_layers, "1..16");
}

void parse_grid(Section s, GridConfig& g) {
  s.read("rows", g.rows);
  s.read("cols", g.cols);
  s.read_enum("neighbourhood", g.neighbourhood, kNeighbourhoods);
  s.reject_unknown();
  require(g.rows >= 1 && g.rows <= 64, s, "rows", g.rows, "1..64");
  require(g.cols >= 1 && g.cols <= 64, s, "cols", g.cols, "1..64");
}

void parse_training(Section s, TrainingConfig& t) {
  s.read("generations", t.generations);
  s.read("population_size", t.population_size);
  s.read("tournament_size", t.tournament_size);
  s.read("batch_size", t.batch_size);
  s.read("batches_per_generation", t.batches_per_generation);
  s.read("learning_rate", t.learning_rate);
  s.read("adam_beta1", t.adam_beta1);
  s.read("adam_beta2", t.adam_beta2);
  s.read_enum("loss", t.loss, kLosses);
  s.read("discriminator_skip", t.discriminator_skip);
  s.read("r1_penalty", t.r1_penalty);
  s.read("mutation_probability", t.mutation_probability);
  s.read("mutation_scale", t.mutation_scale);
  s.read_enum("replacement", t.replacement, kRules);
  s.read("n_replacements", t.n_replacements);
  s.read("mixture_sigma", t.mixture_sigma);
  s.read("fitness_samples", t.fitness_samples);
  s.read("score_samples", t.score_samples);
  s.reject_unknown();
  require(t.generations >= 1, s, "generations", t.generations, ">= 1");
  require(t.population_size >= 1, s, "population_size", t.population_size, ">= 1");
  require(t.tournament_size >= 1, s, "tournament_size", t.tournament_size, ">= 1");
  require(t.batch_size >= 1, s, "batch_size", t.batch_size, ">= 1");
  require(t.batches_per_generation >= 0, s, "batches_per_generation", t.batches_per_generation,
          ">= 0 (0 = one epoch)");
  require(t.learning_rate > 0, s, "learning_rate", t.learning_rate, "> 0");
  require(t.adam_beta1 >= 0 && t.adam_beta1 < 1, s, "adam_beta1", t.adam_beta1, "in [0, 1)");
  require(t.adam_beta2 >= 0 && t.adam_beta2 < 1, s, "adam_beta2", t.adam_beta2, "in [0, 1)");
  require(t.discriminator_skip >= 0, s, "discriminator_skip", t.discriminator_skip, ">= 0");
  require(t.r1_penalty >= 0, s, "r1_penalty", t.r1_penalty, ">= 0 (0 = off)");
  require(t.mutation_probability >= 0 && t.mutation_probability <= 1, s, "mutation_probability",
          t.mutation_probability, "in [0, 1]");
  require(t.mutation_scale >= 0, s, "mutation_scale", t.mutation_scale, ">= 0");
  require(t.n_replacements >= 1 && t.n_replacements <= t.population_size, s, "n_replacements", t.n_replacements,
          "1..population_size");
  require(t.mixture_sigma >= 0, s, "mixture_sigma", t.mixture_sigma, ">= 0");
  require(t.fitness_samples >= 2, s, "fitness_samples", t.fitness_samples, ">= 2");
  require(t.score_samples >= 2, s, "score_samples", t.score_samples, ">= 2");
}

void parse_evaluation(Section s, EvaluationConfig& e) {
  s.read("classifier", e.classifier);
  s.read("final_samples", e.final_samples);
  s.read("grid_images", e.grid_images);
  s.read("grid_ensemble", e.grid_ensemble);
  s.read("preview_every", e.preview_every);
  s.reject_unknown();
  require(e.final_samples >= 2, s, "final_samples", e.final_samples, ">= 2");
  require(e.grid_images >= 1 && e.grid_images <= 400, s, "grid_images", e.grid_images, "1..400");
  require(e.preview_every >= 0, s, "preview_every", e.preview_every, ">= 0 (0 = none)");
}

void parse_runtime(Section s, RuntimeConfig& r) {
  s.read("threads", r.threads);
  s.read("heartbeat_interval_ms", r.heartbeat_interval_ms);
  s.read("late_after_ms", r.late_after_ms);
  s.read("dead_after_ms", r.dead_after_ms);
  s.read("log_level", r.log_level);
  s.reject_unknown();
  require(r.threads >= 1 && r.threads <= 64, s, "threads", r.threads, "1..64");
  require(r.heartbeat_interval_ms >= 10, s, "heartbeat_interval_ms", r.heartbeat_interval_ms, ">= 10");
  require(r.late_after_ms > r.heartbeat_interval_ms, s, "late_after_ms", r.late_after_ms,
          "> heartbeat_interval_ms");
  require(r.dead_after_ms > r.late_after_ms, s, "dead_after_ms", r.dead_after_ms, "> late_after_ms");
  if (r.log_level != "debug" && r.log_level != "info" && r.log_level != "warn" && r.log_level != "error")
    s.fail("log_level", fmt::format("'{}' is not one of debug, info, warn, error", r.log_level));
}

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: line {}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  Config c;
  c.source = source;
  Section top(root, "", c.source);
  if (!root || root.IsNull()) top.fail("", "the file is empty: expected a mapping of sections");
  top.read("seed", c.seed);
  top.read("output_dir", c.output_dir);
  parse_data(Section(top.child("data"), "data", c.source), c.data);
  parse_network(Section(top.child("network"), "network", c.source), c.network);
  parse_grid(Section(top.child("grid"), "grid", c.source), c.grid);
  parse_training(Section(top.child("training"), "training", c.source), c.training);
  parse_evaluation(Section(top.child("evaluation"), "evaluation", c.source), c.evaluation);
  parse_runtime(Section(top.child("runtime"), "runtime", c.source), c.runtime);
  top.reject_unknown();
  if (c.output_dir.empty()) top.fail("output_dir", "must not be empty");

  const bool toy_data = is_toy(c.data.dataset);
  const bool toy_net = c.network.kind == NetworkKind::kToy;
  if (toy_data != toy_net)
    top.fail("network.kind", toy_data ? "expected toy for the 2-D datasets ring and grid"
                                      : "toy networks need data.dataset ring or grid");
  return c;
}

Config load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot read the configuration file", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

const char* to_string(DatasetKind kind) { return name_of(kDatasets, kind); }
const char* to_string(NetworkKind kind) { return name_of(kNetworks, kind); }
const char* to_string(NeighbourhoodKind kind) { return name_of(kNeighbourhoods, kind); }
const char* to_string(LossKind kind) { return name_of(kLosses, kind); }
const char* to_string(ReplacementRule rule) { return name_of(kRules, rule); }

std::string to_yaml(const Config& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "seed" << YAML::Value << c.seed;
  out << YAML::Key << "output_dir" << YAML::Value << c.output_dir;
  out << YAML::Key << "data" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dataset" << YAML::Value << to_string(c.data.dataset);
  out << YAML::Key << "path" << YAML::Value << c.data.path;
  out << YAML::Key << "train_limit" << YAML::Value << c.data.train_limit;
  out << YAML::Key << "toy_samples" << YAML::Value << c.data.toy_samples;
  out << YAML::EndMap;
  out << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << to_string(c.network.kind);
  out << YAML::Key << "latent_dim" << YAML::Value << c.network.latent_dim;
  out << YAML::Key << "toy_hidden" << YAML::Value << c.network.toy_hidden;
  out << YAML::Key << "toy_layers" << YAML::Value << c.network.toy_layers;
  out << YAML::EndMap;
  out << YAML::Key << "grid" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "rows" << YAML::Value << c.grid.rows;
  out << YAML::Key << "cols" << YAML::Value << c.grid.cols;
  out << YAML::Key << "neighbourhood" << YAML::Value << to_string(c.grid.neighbourhood);
  out << YAML::EndMap;
  const TrainingConfig& t = c.training;
  out << YAML::Key << "training" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "generations" << YAML::Value << t.generations;
  out << YAML::Key << "population_size" << YAML::Value << t.population_size;
  out << YAML::Key << "tournament_size" << YAML::Value << t.tournament_size;
  out << YAML::Key << "batch_size" << YAML::Value << t.batch_size;
  out << YAML::Key << "batches_per_generation" << YAML::Value << t.batches_per_generation;
  out << YAML::Key << "learning_rate" << YAML::Value << t.learning_rate;
  out << YAML::Key << "adam_beta1" << YAML::Value << t.adam_beta1;
  out << YAML::Key << "adam_beta2" << YAML::Value << t.adam_beta2;
  out << YAML::Key << "loss" << YAML::Value << to_string(t.loss);
  out << YAML::Key << "discriminator_skip" << YAML::Value << t.discriminator_skip;
  out << YAML::Key << "r1_penalty" << YAML::Value << t.r1_penalty;
  out << YAML::Key << "mutation_probability" << YAML::Value << t.mutation_probability;
  out << YAML::Key << "mutation_scale" << YAML::Value << t.mutation_scale;
  out << YAML::Key << "replacement" << YAML::Value << to_string(t.replacement);
  out << YAML::Key << "n_replacements" << YAML::Value << t.n_replacements;
  out << YAML::Key << "mixture_sigma" << YAML::Value << t.mixture_sigma;
  out << YAML::Key << "fitness_samples" << YAML::Value << t.fitness_samples;
  out << YAML::Key << "score_samples" << YAML::Value << t.score_samples;
  out << YAML::EndMap;
  out << YAML::Key << "evaluation" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "classifier" << YAML::Value << c.evaluation.classifier;
  out << YAML::Key << "final_samples" << YAML::Value << c.evaluation.final_samples;
  out << YAML::Key << "grid_images" << YAML::Value << c.evaluation.grid_images;
  out << YAML::Key << "grid_ensemble" << YAML::Value << c.evaluation.grid_ensemble;
  out << YAML::Key << "preview_every" << YAML::Value << c.evaluation.preview_every;
  out << YAML::EndMap;
  out << YAML::Key << "runtime" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "threads" << YAML::Value << c.runtime.threads;
  out << YAML::Key << "heartbeat_interval_ms" << YAML::Value << c.runtime.heartbeat_interval_ms;
  out << YAML::Key << "late_after_ms" << YAML::Value << c.runtime.late_after_ms;
  out << YAML::Key << "dead_after_ms" << YAML::Value << c.runtime.dead_after_ms;
  out << YAML::Key << "log_level" << YAML::Value << c.runtime.log_level;
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace cellgan
