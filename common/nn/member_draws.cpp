// Generators of a cell's own and draws into members' rows (member_draws.h).
#include "common/nn/member_draws.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/torch.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <mutex>
#include <stdexcept>

namespace cellgan {
namespace {

void check_rows(const torch::Tensor& into, const std::vector<at::Generator>& generators, const char* who) {
  const auto members = static_cast<std::int64_t>(generators.size());
  if (into.dim() < 1 || into.size(0) != members)
    throw std::invalid_argument(
        fmt::format("{}: expected [{}, ...], got [{}]", who, members, fmt::join(into.sizes(), ", ")));
}

// Row p of `into` filled by `draw(tensor, generator)` on generators[p]'s
// device: in place where the row lives there, else into a new tensor that
// is then copied in.
template <typename Draw>
void draw_rows(const torch::Tensor& into, const std::vector<at::Generator>& generators, const char* who,
               const Draw& draw) {
  check_rows(into, generators, who);
  torch::NoGradGuard no_grad;
  for (std::size_t p = 0; p < generators.size(); ++p) {
    const at::Generator& generator = generators[p];
    torch::Tensor row = into.select(0, static_cast<std::int64_t>(p));
    if (row.device() == generator.device()) {
      draw(row, generator);
    } else {
      torch::Tensor drawn = torch::empty(row.sizes(), row.options().device(generator.device()));
      draw(drawn, generator);
      row.copy_(drawn);
    }
  }
}

void check_rate(double rate, const char* who) {
  if (rate < 0.0 || rate >= 1.0) throw std::invalid_argument(fmt::format("{}: rate {} outside [0, 1)", who, rate));
}

// A dropout mask in place: Bernoulli(1 - rate) values divided by 1 - rate.
void fill_dropout(torch::Tensor& t, double rate, const at::Generator& generator) {
  t.bernoulli_(1.0 - rate, generator).div_(1.0 - rate);
}

}  // namespace

at::Generator generator_on(torch::Device device, std::uint64_t seed) {
  if (device.is_cpu()) return at::detail::createCPUGenerator(seed);
  at::Generator device_default = at::globalContext().defaultGenerator(device);
  at::Generator own;
  {
    const std::lock_guard<std::mutex> lock(device_default.mutex());
    own = device_default.clone();
  }
  own.set_current_seed(seed);
  return own;
}

void draw_normal_rows(const torch::Tensor& into, const std::vector<at::Generator>& generators) {
  draw_rows(into, generators, "draw_normal_rows",
            [](torch::Tensor& row, const at::Generator& g) { row.normal_(0.0, 1.0, g); });
}

void draw_uniform_rows(const torch::Tensor& into, const std::vector<at::Generator>& generators) {
  draw_rows(into, generators, "draw_uniform_rows",
            [](torch::Tensor& row, const at::Generator& g) { row.uniform_(0.0, 1.0, g); });
}

void draw_dropout_rows(const torch::Tensor& into, double rate, const std::vector<at::Generator>& generators) {
  check_rate(rate, "draw_dropout_rows");
  draw_rows(into, generators, "draw_dropout_rows",
            [rate](torch::Tensor& row, const at::Generator& g) { fill_dropout(row, rate, g); });
}

torch::Tensor dropout_mask(torch::IntArrayRef sizes, double rate, const at::Generator& generator) {
  check_rate(rate, "dropout_mask");
  torch::Tensor mask = torch::empty(sizes, torch::TensorOptions().dtype(torch::kFloat32).device(generator.device()));
  fill_dropout(mask, rate, generator);
  return mask;
}

}  // namespace cellgan
