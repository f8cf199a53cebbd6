// Ensembles as torch.load files (see ensemble_export.h).
#include "common/nn/ensemble_export.h"

#include <torch/torch.h>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <string>

#include "common/nn/conditional_networks.h"

namespace cellgan {
namespace {

using Dict = c10::impl::GenericDict;

Dict string_dict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }

// A tensor of its own (not a view of a larger storage) on the CPU.
torch::Tensor owned(const torch::Tensor& t) { return t.detach().to(torch::kCPU).clone().contiguous(); }

torch::Tensor doubles(const std::vector<double>& values) {
  return torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64));
}

Dict state_dict(Individual& individual) {
  Dict state = string_dict();
  Generator& g = individual.generator();
  for (const auto& item : g->named_parameters(/*recurse=*/true)) state.insert(item.key(), owned(item.value()));
  for (const auto& item : g->named_buffers(/*recurse=*/true)) state.insert(item.key(), owned(item.value()));
  return state;
}

Dict ensemble_dict(Ensemble& ensemble) {
  const NetworkShape& shape = ensemble.shape;
  Dict d = string_dict();
  d.insert("format", std::string(kExportFormat));
  d.insert("version", kExportVersion);
  d.insert("kind", std::string(to_string(shape.kind)));
  d.insert("latent_dim", shape.latent_dim);
  d.insert("data_dim", shape.data_dim);
  d.insert("sample_dim", is_conditional(shape) ? kImageDim : shape.data_dim);
  d.insert("toy_hidden", shape.toy_hidden);
  d.insert("toy_layers", shape.toy_layers);
  d.insert("label_slots", is_conditional(shape) ? kClassCount : std::int64_t{0});
  d.insert("cell", static_cast<std::int64_t>(ensemble.cell));
  d.insert("weights", doubles(ensemble.weights));
  c10::impl::GenericList generators(c10::AnyType::get());
  for (Individual& g : ensemble.generators) generators.push_back(state_dict(g));
  d.insert("generators", generators);
  d.insert("classes", c10::IValue());
  return d;
}

// The archive torch.save writes: data.pkl and one record per tensor
// storage, data/0, data/1, ... (as torch::pickle_save, without its type
// tags).
std::vector<char> archive(const c10::IValue& value) {
  std::vector<char> pickled;
  torch::jit::Pickler pickler(
      [&](const char* bytes, std::size_t size) { pickled.insert(pickled.end(), bytes, bytes + size); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
      /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* bytes, std::size_t size) {
    out.insert(out.end(), static_cast<const char*>(bytes), static_cast<const char*>(bytes) + size);
    return size;
  });
  const std::vector<at::Tensor>& tensors = pickler.tensorData();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const torch::jit::WriteableTensorData data = torch::jit::getWriteableTensorData(tensors[i]);
    writer.writeRecord("data/" + std::to_string(i), data.data(), data.sizeInBytes());
  }
  writer.writeRecord("data.pkl", pickled.data(), pickled.size());
  writer.writeEndOfFile();
  return out;
}

}  // namespace

std::vector<char> export_ensemble(Ensemble& ensemble) { return archive(ensemble_dict(ensemble)); }

std::vector<char> export_ensemble(ClassGenerator& classes) {
  Dict d = ensemble_dict(classes.mixture());
  std::vector<std::int64_t> slices;
  for (const auto& [first, count] : classes.slices()) {
    slices.push_back(first);
    slices.push_back(count);
  }
  Dict index = string_dict();
  index.insert("proportions", doubles(classes.proportions()));
  index.insert("generators", torch::tensor(slices, torch::kInt64).reshape({-1, 2}));
  d.insert_or_assign("classes", index);
  return archive(d);
}

}  // namespace cellgan
