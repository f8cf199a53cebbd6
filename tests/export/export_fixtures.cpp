// Test helper of tests/export/round_trip.sh: writes a small saved ensemble
// of every network kind, as a run leaves it (ensemble.bin, and classes.json
// for a per_class run), into DIR/<case>/.
//
// The weights are drawn from a fixed seed and then moved off their initial
// values, BatchNorm's running statistics included, so that a loader that
// drops or misplaces any tensor gives other samples. The mixture weights
// are unequal, and one generator has weight 0.
//
// Usage: export_fixtures DIR
#include <torch/torch.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "common/image_files.h"
#include "common/nn/class_generator.h"
#include "common/nn/ensemble.h"

namespace cellgan {
namespace {

// Every parameter and buffer away from its initial value (running
// variances stay positive; the batch counter is left alone).
void perturb(Generator& g) {
  torch::NoGradGuard no_grad;
  for (auto& p : g->parameters()) p.add_(torch::randn(p.sizes()) * 0.05);
  for (const auto& item : g->named_buffers()) {
    torch::Tensor b = item.value();
    if (item.key().find("running_mean") != std::string::npos) b.copy_(torch::randn(b.sizes()) * 0.3);
    if (item.key().find("running_var") != std::string::npos) b.copy_(torch::rand(b.sizes()) * 1.5 + 0.5);
  }
}

Ensemble make_ensemble(const NetworkShape& shape, const std::vector<double>& weights, int cell) {
  Ensemble e;
  e.shape = shape;
  e.cell = cell;
  e.weights = weights;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    e.generators.emplace_back(Role::kGenerator, shape, 2e-4, AdamSettings{}, LossKind::kBce);
    perturb(e.generators.back().generator());
  }
  return e;
}

NetworkShape shape_of(NetworkKind kind, std::int64_t latent_dim) {
  NetworkShape s;
  s.kind = kind;
  s.latent_dim = latent_dim;
  s.data_dim = kImageDim;
  if (kind == NetworkKind::kDcganConditional) {
    s.latent_dim += kClassCount;
    s.data_dim += kClassCount;
  }
  if (kind == NetworkKind::kToy) {
    s.data_dim = 2;
    s.toy_hidden = 24;
    s.toy_layers = 3;
  }
  return s;
}

std::string folder(const std::string& root, const std::string& name) {
  const std::string dir = root + "/" + name;
  std::filesystem::create_directories(dir);
  return dir + "/ensemble.bin";
}

void write_all(const std::string& root) {
  torch::manual_seed(2024);
  make_ensemble(shape_of(NetworkKind::kMlp, 16), {0.5, 0.3, 0.2}, 4).save(folder(root, "mlp"));
  make_ensemble(shape_of(NetworkKind::kDcgan, 12), {0.7, 0.0, 0.3}, 0).save(folder(root, "dcgan"));
  make_ensemble(shape_of(NetworkKind::kSngan, 12), {0.4, 0.6}, 1).save(folder(root, "sngan"));
  make_ensemble(shape_of(NetworkKind::kToy, 4), {0.25, 0.25, 0.5}, 2).save(folder(root, "toy"));
  make_ensemble(shape_of(NetworkKind::kDcganConditional, 8), {0.6, 0.4}, 3).save(folder(root, "dcgan_conditional"));
  // per_class: three classes of mlp generators, one, two and one each.
  std::vector<Ensemble> per_class;
  per_class.push_back(make_ensemble(shape_of(NetworkKind::kMlp, 16), {1.0}, 0));
  per_class.push_back(make_ensemble(shape_of(NetworkKind::kMlp, 16), {0.3, 0.7}, 1));
  per_class.push_back(make_ensemble(shape_of(NetworkKind::kMlp, 16), {1.0}, 2));
  ClassGenerator classes(std::move(per_class), {5.0, 3.0, 2.0});
  const std::string path = folder(root, "per_class");
  classes.mixture().save(path);
  write_file_atomic(ClassGenerator::index_path(path), classes.index_json());
}

}  // namespace
}  // namespace cellgan

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: export_fixtures DIR\n";
    return 2;
  }
  torch::set_num_threads(1);
  cellgan::write_all(argv[1]);
  return 0;
}
