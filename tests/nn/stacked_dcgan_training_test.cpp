// One GAN training step of stacked dcgan and sngan networks (BatchedAdam)
// against the same members stepped alone (torch::optim::Adam), with their
// own learning rates and Adam ages, and each member's dropout masks drawn
// from a generator of its own seeded as Torch's global generator is before
// the member's own step.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/nn/individual_bytes.h"
#include "common/nn/stacked_networks.h"
#include "tests/nn/stacked_members.h"

namespace cellgan {
namespace {

using test::aged_individual;

constexpr std::int64_t kMembers = 3;

struct Pair {
  Individual g;
  Individual d;
};

NetworkShape shape_of(NetworkKind kind, DiscriminatorOutput output = DiscriminatorOutput::kProbability) {
  NetworkShape shape;
  shape.kind = kind;
  shape.d_output = output;
  return shape;
}

// An Individual byte form read back: tensors (parameters, then buffers),
// and per parameter its Adam step count and moments.
struct Decoded {
  std::vector<torch::Tensor> tensors;
  std::vector<std::int64_t> steps;
  std::vector<torch::Tensor> moments;  // exp_avg, exp_avg_sq per parameter with state
};

Decoded decode(const Bytes& bytes) {
  ByteReader r(bytes, "individual");
  const IndividualHeader header = read_individual_header(r);
  const auto tensor = [&r] {
    const auto n = static_cast<std::int64_t>(r.get<std::uint64_t>());
    torch::Tensor t = torch::empty({n});
    r.get_raw(t.data_ptr<float>(), static_cast<std::size_t>(n) * sizeof(float));
    return t;
  };
  Decoded out;
  for (std::uint32_t i = 0; i < header.parameter_count + header.buffer_count; ++i) out.tensors.push_back(tensor());
  for (std::uint32_t i = 0; i < header.parameter_count; ++i) {
    out.steps.push_back(r.get<std::int64_t>());
    if (out.steps.back() < 0) continue;
    out.moments.push_back(tensor());
    out.moments.push_back(tensor());
  }
  return out;
}

// A bias followed by batch norm has, in exact arithmetic, no gradient: what
// reaches it is rounding, and Adam turns rounding of either sign into a
// step of up to about lr. Such biases (and the running means of their batch
// norms) are compared within `noise_bound`; the other tensors within `ulps`
// units in the last place plus `atol`, and the other Adam moments within
// `moment_share` of their tensor's largest magnitude. Returns "" or where
// the two differ beyond that.
struct Tolerance {
  int ulps = 0;
  double atol = 0.0;
  double moment_share = 0.0;
  double noise_bound = 0.0;
  std::vector<std::size_t> noise;  // indices of the tensors before batch norm, and of its running mean
};

std::string beyond(const Bytes& stacked, const Bytes& alone, const Tolerance& tolerance) {
  const Decoded a = decode(stacked);
  const Decoded b = decode(alone);
  if (a.steps != b.steps || a.tensors.size() != b.tensors.size()) return "step counts or tensor counts differ";
  std::string out;
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const torch::Tensor& x = a.tensors[i];
    const torch::Tensor& y = b.tensors[i];
    const bool noise = std::find(tolerance.noise.begin(), tolerance.noise.end(), i) != tolerance.noise.end();
    const torch::Tensor ulp = torch::nextafter(y.abs(), torch::full_like(y, INFINITY)) - y.abs();
    const torch::Tensor bound = noise ? torch::full_like(y, tolerance.noise_bound) : ulp * tolerance.ulps + tolerance.atol;
    if (((x - y).abs() > bound).any().item<bool>())
      out += " tensor " + std::to_string(i) + " (max |difference| " +
             std::to_string((x - y).abs().max().item<double>()) + ")";
  }
  for (std::size_t i = 0, k = 0; i < a.steps.size(); ++i) {
    if (a.steps[i] < 0) continue;
    const bool noise = std::find(tolerance.noise.begin(), tolerance.noise.end(), i) != tolerance.noise.end();
    for (int moment = 0; moment < 2; ++moment, ++k) {
      const torch::Tensor& x = a.moments[k];
      const torch::Tensor& y = b.moments[k];
      if (!noise && ((x - y).abs() > tolerance.moment_share * y.abs().max()).any().item<bool>())
        out += " moment " + std::to_string(moment) + " of parameter " + std::to_string(i);
    }
  }
  return out;
}

// Steps `rounds` times alone and stacked; returns, per member (D, then G),
// where the rows differ beyond the tolerances.
std::vector<std::string> step_differences(const NetworkShape& shape, int rounds, const Tolerance& d_tolerance,
                                          const Tolerance& g_tolerance) {
  std::vector<Pair> pairs;
  StackedGenerator g(shape, kMembers, 2e-4, {}, LossKind::kBce);
  StackedDiscriminator d(shape, kMembers, 2e-4, {}, LossKind::kBce);
  for (int p = 0; p < kMembers; ++p) {
    pairs.push_back({aged_individual(Role::kGenerator, shape, 1e-4 * (p + 1), p % 3, 100 + p),
                     aged_individual(Role::kDiscriminator, shape, 3e-4 / (p + 1), (p + 1) % 3 * 2, 200 + p)});
    g.load_row(p, pairs[p].g);
    d.load_row(p, pairs[p].d);
  }
  for (int round = 0; round < rounds; ++round) {
    const std::uint64_t seed = 300 + 10 * round;
    const test::StepInputs in = test::step_inputs(shape, kMembers, 16, 7 + round);
    std::vector<at::Generator> streams;
    for (int p = 0; p < kMembers; ++p) streams.push_back(at::detail::createCPUGenerator(seed + p));
    d.network()->set_member_generators(streams);
    test::step_stacked(g, d, in, BceForm::kPyTorch);
    test::StepLosses alone;
    for (int p = 0; p < kMembers; ++p) {
      torch::manual_seed(seed + p);
      test::step_alone(pairs[p].g, pairs[p].d, in, p, BceForm::kPyTorch, alone);
    }
  }
  std::vector<std::string> out;
  for (int p = 0; p < kMembers; ++p) {
    out.push_back(beyond(d.row_bytes(p), pairs[p].d.encode(), d_tolerance));
    out.push_back(beyond(g.row_bytes(p), pairs[p].g.encode(), g_tolerance));
  }
  return out;
}

// On the CPU every layer of the dcgan pair rounds as the member's own
// (stacked_layers_test.cpp), and the dropout masks are the members' own:
// two steps come out as the members' own to the bit.
TEST(StackedDcganTraining, DcganStepEqualsTheMembersSteppedAloneToTheBit) {
  CELLGAN_SKIP_UNLESS_KERNELS_ROUND_ALIKE();
  const Tolerance exact{0, 0.0, 0.0, 0.0, {}};
  const std::vector<std::string> differences = step_differences(shape_of(NetworkKind::kDcgan), 2, exact, exact);
  for (std::size_t i = 0; i < differences.size(); ++i)
    EXPECT_EQ(differences[i], "") << (i % 2 == 0 ? "D" : "G") << " of member " << i / 2;
}

// Spectral norm rounds apart from the members' own (batched products and
// per-row norms, stacked_layers_test.cpp): sngan's D differs in the last
// bits of sigma, hence of every weight's gradient, and Adam turns that into
// a difference of its update of a small share of lr where a gradient is
// near 0; G sees D's outputs, so it differs too. Measured after two steps:
// every weight within 1e-6 of the member's own, the biases before batch
// norm within 1.5e-4, their running means within 1.6e-5.
// Bounds: 8 units in the last place plus 6e-6 (2e-2 of the largest lr,
// 3e-4), every Adam moment within 1e-2 of its tensor's largest magnitude,
// and the biases before G's batch norms (whose exact gradient is 0: what
// reaches them is rounding, which Adam turns into steps of up to about lr
// of either sign) within 2 steps * 2 * 3e-4.
TEST(StackedDcganTraining, SnganStepEqualsTheMembersSteppedAloneToRounding) {
  // Tensor indices (parameters, then buffers) as the Individual byte form
  // lists them: G linear.bias 1, conv1.bias 5, the running means 10 and 13.
  const Tolerance g{8, 6e-6, 1e-2, 1.2e-3, {1, 5, 10, 13}};
  const Tolerance d{8, 6e-6, 1e-2, 0.0, {}};
  const std::vector<std::string> differences = step_differences(shape_of(NetworkKind::kSngan), 2, d, g);
  for (std::size_t i = 0; i < differences.size(); ++i)
    EXPECT_EQ(differences[i], "") << (i % 2 == 0 ? "D" : "G") << " of member " << i / 2;
}

// Member 1 of a stack of three and the same member in a stack of its own,
// with the same dropout stream: the same bits after two steps (what makes
// a cell's result independent of the cells sharing its stack and worker).
TEST(StackedDcganTraining, AMembersStepDoesNotDependOnItsStack) {
  for (const NetworkKind kind : {NetworkKind::kDcgan, NetworkKind::kSngan}) {
    SCOPED_TRACE(to_string(kind));
    const NetworkShape shape = shape_of(kind);
    StackedGenerator g3(shape, kMembers, 2e-4, {}, LossKind::kBce), g1(shape, 1, 2e-4, {}, LossKind::kBce);
    StackedDiscriminator d3(shape, kMembers, 2e-4, {}, LossKind::kBce), d1(shape, 1, 2e-4, {}, LossKind::kBce);
    for (int p = 0; p < kMembers; ++p) {
      g3.load_row(p, aged_individual(Role::kGenerator, shape, 1e-4 * (p + 1), p % 3, 100 + p));
      d3.load_row(p, aged_individual(Role::kDiscriminator, shape, 3e-4 / (p + 1), (p + 1) % 3 * 2, 200 + p));
    }
    g1.load_row(0, g3.row_bytes(1));
    d1.load_row(0, d3.row_bytes(1));
    for (int round = 0; round < 2; ++round) {
      const test::StepInputs in = test::step_inputs(shape, kMembers, 16, 7 + round);
      const test::StepInputs alone{in.real.narrow(0, 1, 1), in.z_fake.narrow(0, 1, 1), in.z_step.narrow(0, 1, 1)};
      std::vector<at::Generator> streams;
      for (int p = 0; p < kMembers; ++p) streams.push_back(at::detail::createCPUGenerator(400 + 10 * round + p));
      d3.network()->set_member_generators(streams);
      d1.network()->set_member_generators({at::detail::createCPUGenerator(401 + 10 * round)});
      test::step_stacked(g3, d3, in, BceForm::kPyTorch);
      test::step_stacked(g1, d1, alone, BceForm::kPyTorch);
    }
    EXPECT_EQ(test::bytes_difference(d3.row_bytes(1), d1.row_bytes(0)), "") << "D";
    EXPECT_EQ(test::bytes_difference(g3.row_bytes(1), g1.row_bytes(0)), "") << "G";
  }
}

}  // namespace
}  // namespace cellgan
