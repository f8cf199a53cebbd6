// The byte form of an individual (Individual::encode), written from and read
// into plain tensors: Individual and the stacked networks
// (stacked_networks.h) both write and read it through these functions, so a
// stack's row is the same bytes as the individual it holds.
//
// Layout (host byte order, float32 values whatever the device):
//   u32 magic "ICG1", u8 role, u8 loss kind, i32 source cell,
//   f64 learning rate, f64 fitness, u32 parameter count, u32 buffer count;
//   every parameter, then every buffer, as (u64 value count, the values);
//   then, per parameter, its Adam state: i64 step, -1 for none, and when
//   there is one, exp_avg and exp_avg_sq as tensors above.
// Tensors are written in the order of the network module's parameters()
// and buffers(), each in its module's layout (a torch::nn::Linear weight is
// [out, in]).
//
// Reading checks the magic number, the role, every tensor's value count and
// throws InputError naming "individual" on a mismatch or a short payload.
//
// Thread-safety: pure functions over the caller's writer, reader and tensors.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "common/bytes.h"
#include "common/config.h"

namespace cellgan {

enum class Role : std::uint8_t { kGenerator = 0, kDiscriminator = 1 };

struct IndividualHeader {
  Role role = Role::kGenerator;
  LossKind loss = LossKind::kBce;
  std::int32_t source_cell = -1;
  double learning_rate = 0.0;
  double fitness = 0.0;
  std::uint32_t parameter_count = 0;
  std::uint32_t buffer_count = 0;
};

// The size of the header in bytes (for size bounds).
constexpr std::size_t kIndividualHeaderBytes = sizeof(std::uint32_t) + 2 * sizeof(std::uint8_t) +
                                               sizeof(std::int32_t) + 2 * sizeof(double) + 2 * sizeof(std::uint32_t);

void write_individual_header(ByteWriter& w, const IndividualHeader& header);
// The header, after checking the magic number and the role.
IndividualHeader read_individual_header(ByteReader& r);

// (u64 value count, float32 values) of `t`, copied to the CPU as float32.
void write_individual_tensor(ByteWriter& w, const torch::Tensor& t);
// Reads values into `into` (any device), which must have as many values.
void read_individual_tensor(ByteReader& r, torch::Tensor& into);
// Passes over a tensor of as many values as `like`.
void skip_individual_tensor(ByteReader& r, const torch::Tensor& like);

}  // namespace cellgan
