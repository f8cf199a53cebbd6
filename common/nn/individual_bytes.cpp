// The byte form of an individual: header and tensors (individual_bytes.h).
#include "common/nn/individual_bytes.h"

#include <torch/torch.h>

#include <string>

#include "common/error.h"

namespace cellgan {
namespace {

constexpr std::uint32_t kMagic = 0x49434731;  // "ICG1"

// Reads the value count of a tensor written by write_individual_tensor and
// checks it against the tensor it stands for.
std::uint64_t get_tensor_size(ByteReader& r, const torch::Tensor& like) {
  const auto n = r.get<std::uint64_t>();
  if (n != static_cast<std::uint64_t>(like.numel()))
    throw InputError(r.what() + ": a tensor has " + std::to_string(n) + " values, expected " +
                     std::to_string(like.numel()) + " (network shapes differ)");
  return n;
}

}  // namespace

void write_individual_header(ByteWriter& w, const IndividualHeader& header) {
  w.put<std::uint32_t>(kMagic);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(header.role));
  w.put<std::uint8_t>(static_cast<std::uint8_t>(header.loss));
  w.put<std::int32_t>(header.source_cell);
  w.put<double>(header.learning_rate);
  w.put<double>(header.fitness);
  w.put<std::uint32_t>(header.parameter_count);
  w.put<std::uint32_t>(header.buffer_count);
}

IndividualHeader read_individual_header(ByteReader& r) {
  if (r.get<std::uint32_t>() != kMagic) throw InputError("individual: bad magic number: not an encoded individual");
  IndividualHeader header;
  header.role = static_cast<Role>(r.get<std::uint8_t>());
  if (header.role != Role::kGenerator && header.role != Role::kDiscriminator)
    throw InputError("individual: unknown role");
  header.loss = static_cast<LossKind>(r.get<std::uint8_t>());
  header.source_cell = r.get<std::int32_t>();
  header.learning_rate = r.get<double>();
  header.fitness = r.get<double>();
  header.parameter_count = r.get<std::uint32_t>();
  header.buffer_count = r.get<std::uint32_t>();
  return header;
}

void write_individual_tensor(ByteWriter& w, const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::TensorOptions().device(torch::kCPU).dtype(torch::kFloat32)).contiguous();
  w.put<std::uint64_t>(static_cast<std::uint64_t>(c.numel()));
  w.put_raw(c.data_ptr<float>(), static_cast<std::size_t>(c.numel()) * sizeof(float));
}

void read_individual_tensor(ByteReader& r, torch::Tensor& into) {
  const std::uint64_t n = get_tensor_size(r, into);
  if (into.is_cpu() && into.is_contiguous() && into.scalar_type() == torch::kFloat32) {
    r.get_raw(into.data_ptr<float>(), n * sizeof(float));  // straight in: no copy of its own
    into.unsafeGetTensorImpl()->bump_version();  // as copy_ would: the tensor has changed
    return;
  }
  // To a GPU through pinned memory, without a wait for the device.
  const bool gpu = into.is_cuda();
  torch::Tensor buf =
      torch::empty({static_cast<std::int64_t>(n)}, torch::TensorOptions(torch::kFloat32).pinned_memory(gpu));
  r.get_raw(buf.data_ptr<float>(), n * sizeof(float));
  torch::NoGradGuard no_grad;
  into.copy_(buf.view(into.sizes()), /*non_blocking=*/gpu);
}

void skip_individual_tensor(ByteReader& r, const torch::Tensor& like) {
  r.skip(get_tensor_size(r, like) * sizeof(float));
}

}  // namespace cellgan
