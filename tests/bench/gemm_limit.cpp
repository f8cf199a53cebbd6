// bench_gemm_limit: E2's reference (tests/bench/README.md), the time one
// thread's sgemm needs for the matrix products of one MNIST-MLP
// cell-generation, with nothing else: no activations, no optimizer, no
// classifier, no communication.
//
// The networks are common/nn's mlp (G: latent -> 256 -> 256 -> 784, D: 784 ->
// 256 -> 256 -> 1). What a cell-generation multiplies (worker/generation_steps.h):
//  - training, per batch of B rows: the generator step (G forward, D
//    forward on the fakes, and back through both: every layer's weight
//    gradient, the input gradient of every layer but G's first) and the
//    discriminator step (G forward; D forward and back on the real and on
//    the fake batch, no input gradient at D's first layer);
//  - the fitness game: each of the pool's P_G generators forward on F
//    latent rows, each of its P_D discriminators forward on the F real rows
//    and on every generator's F fakes (the trained copies are not scored
//    with population 1 and replacement always, the mixture ES's samples
//    pass through the generators once);
//  - the mixture ES: S rows through the generators.
// Each distinct product shape is timed with torch::mm (the same sgemm as
// torch::nn::Linear) on one thread, the best of several repetitions, and
// the limit is the sum of count x time.
//
// Usage: bench_gemm_limit [--batches 90] [--batch 100] [--pool-g 3] [--pool-d 3] [--fitness 1000] [--score 1000]
// Prints the products and, last, the line e2_report reads:
//   GEMM limit: X s per cell-generation (Y GFLOP at Z GFLOP/s)
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Shape = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // M, K, N of [M x K] . [K x N]

constexpr std::int64_t kHidden = 256;

struct Layer {
  std::int64_t in, out;
};

// Counts of each product shape.
class Products {
 public:
  void add(Shape s, double times) { counts_[s] += times; }
  // A forward pass of `rows` through `layers`; with `backward`, the weight
  // gradients of every layer and the input gradients of every layer from
  // `first_input_gradient` on.
  void pass(const std::vector<Layer>& layers, std::int64_t rows, double times, bool backward,
            std::size_t first_input_gradient = 0) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const Layer& l = layers[i];
      add({rows, l.in, l.out}, times);
      if (!backward) continue;
      add({l.out, rows, l.in}, times);                                   // dW = dY^T X
      if (i >= first_input_gradient) add({rows, l.out, l.in}, times);  // dX = dY W
    }
  }
  const std::map<Shape, double>& counts() const { return counts_; }

 private:
  std::map<Shape, double> counts_;
};

double seconds_per_product(const Shape& s) {
  const auto [m, k, n] = s;
  const torch::Tensor a = torch::randn({m, k});
  const torch::Tensor b = torch::randn({k, n});
  torch::Tensor c = torch::mm(a, b);
  double best = 1e30;
  for (int round = 0; round < 7; ++round) {
    const int reps = std::max<int>(1, static_cast<int>(2e8 / static_cast<double>(2 * m * k * n)));
    const auto began = Clock::now();
    for (int r = 0; r < reps; ++r) torch::mm_out(c, a, b);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - began).count() / reps);
  }
  return best;
}

int run(int argc, char** argv) {
  std::map<std::string, std::int64_t> opt = {{"--batches", 90}, {"--batch", 100}, {"--pool-g", 3},
                                             {"--pool-d", 3},   {"--fitness", 1000}, {"--score", 1000}};
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc || !opt.count(argv[i])) {
      std::fprintf(stderr, "bench_gemm_limit: %s: expected one of --batches --batch --pool-g --pool-d --fitness --score, "
                           "each with a number\n", argv[i]);
      return 2;
    }
    opt[argv[i]] = std::atoll(argv[i + 1]);
  }
  torch::set_num_threads(1);
  const std::vector<Layer> g = {{64, kHidden}, {kHidden, kHidden}, {kHidden, 784}};
  const std::vector<Layer> d = {{784, kHidden}, {kHidden, kHidden}, {kHidden, 1}};
  const double batches = static_cast<double>(opt["--batches"]);
  const std::int64_t bs = opt["--batch"], f = opt["--fitness"];
  Products p;
  // Training: the generator step, then the discriminator step, per batch.
  p.pass(g, bs, batches, /*backward=*/true, /*first_input_gradient=*/1);
  p.pass(d, bs, batches, /*backward=*/true, /*first_input_gradient=*/0);
  p.pass(g, bs, batches, /*backward=*/false);
  p.pass(d, bs, 2 * batches, /*backward=*/true, /*first_input_gradient=*/1);
  // The fitness game and the mixture ES.
  const double pg = static_cast<double>(opt["--pool-g"]), pd = static_cast<double>(opt["--pool-d"]);
  p.pass(g, f, pg, false);
  p.pass(d, f, pd + pg * pd, false);
  p.pass(g, opt["--score"], 1, false);

  double limit = 0.0, flop = 0.0;
  for (const auto& [shape, times] : p.counts()) {
    const auto [m, k, n] = shape;
    const double each = seconds_per_product(shape);
    limit += times * each;
    flop += times * 2.0 * static_cast<double>(m * k * n);
    std::printf("  [%lld x %lld] . [%lld x %lld]  x %.0f: %.1f us each, %.1f GFLOP/s\n", static_cast<long long>(m),
                static_cast<long long>(k), static_cast<long long>(k), static_cast<long long>(n), times, each * 1e6,
                2.0 * static_cast<double>(m * k * n) / each / 1e9);
  }
  std::printf("GEMM limit: %.4f s per cell-generation (%.2f GFLOP at %.1f GFLOP/s)\n", limit, flop / 1e9,
              flop / limit / 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gemm_limit: %s\n", e.what());
    return 1;
  }
}
