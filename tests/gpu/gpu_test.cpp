// cellgan on a GPU (CTest label `gpu`): every test skips when LibTorch sees
// no GPU, and otherwise checks that
// - everything a cell trains lives on the device: parameters, buffers and
//   Adam state, for the toy, MLP and DCGAN networks;
// - the same seed gives the same bits, run after run;
// - a cell's checkpoint goes GPU -> CPU -> GPU unchanged, and trains on both;
// - a short toy run's losses on the GPU are those of the CPU within the
//   sampling noise of the fitness estimate (see the tolerance below);
// - the host-staged all-reduce sums GPU tensors as it sums CPU ones;
// - a step captured as a CUDA graph replays what it does eagerly, and
//   lockstep training with its steps replayed gives the bits it gives
//   without graphs (its latent vectors, drawn on the GPU 16 steps' worth at
//   a time, and dropout masks put in before each replay);
// - a cell's generators on the GPU are Philox generators of its own,
//   seeded as the device's default one, whose draws into a stack's rows do
//   not depend on the other members of the stack; lockstep training on the
//   GPU (toy and DCGAN networks, dropout, WGAN-GP) repeats to the bit;
// - a worker's cells begun together on the GPU (every fitness game and
//   copies' score in one PairGame::play_cells) give the bits of the cells
//   begun one by one there, and so do two cells' games whose losses are
//   taken together;
// - whole jobs (coevolution, data_parallel) on CUDA finish, record their
//   devices in result.json, and repeat to the bit.
// - where the build has NCCL: NCCL joins and sums on one GPU (W = 1), and
//   a data-parallel job with allreduce nccl gives the ring's ensemble.
//   W = 2 needs two GPUs: tests/gpu/nccl_two_gpus.sh.
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/comm/in_process_communicator.h"
#include "common/idx.h"
#include "common/rng.h"
#include "common/nn/allreduce_check.h"
#include "common/nn/cuda_step_graph.h"
#include "common/nn/device.h"
#include "common/nn/ensemble.h"
#include "common/nn/individual.h"
#include "common/nn/losses.h"
#include "common/nn/member_draws.h"
#include "common/nn/stacked_dropout.h"
#include "common/nn/torch_generator_lock.h"
#include "common/nn/training_data.h"
#include "tests/app/job_files.h"
#include "tests/app/one_process_job.h"
#include "tests/common/test_files.h"
#include "tests/nn/synthetic_images.h"
#include "tests/worker/communicator_exchange.h"
#include "tests/worker/toy_cell_fixture.h"
#include "worker/cell_block.h"
#include "worker/cell_checkpoint.h"
#include "worker/cell_trainer.h"
#include "worker/gradient_allreduce.h"
#include "worker/generation_steps.h"
#include "worker/gradient_fusion.h"
#include "worker/nccl_allreduce.h"
#include "worker/pair_game.h"
#include "worker/lockstep_training.h"

namespace cellgan {
namespace {

using test::read_bytes;
using test::run_one_process_job;
using test::TempDir;
using worker_test::toy_config;

#define SKIP_WITHOUT_GPU()                                         \
  do {                                                             \
    if (visible_gpus() == 0) GTEST_SKIP() << "no GPU is visible"; \
  } while (0)

torch::Device gpu() { return resolve_device("cuda:0", 0); }

// A toy cell as worker_test::Fixture, on `device`.
struct DeviceCell {
  DeviceCell(const Config& c, torch::Device device)
      : config(c), data(config, device), scorer(make_scorer(config, device)), trainer(config, data, *scorer) {
    for (int cell : {1, 3, 5, 7}) {
      CellState s = trainer.initial_state(cell, 4);
      centres.push_back({s.generators[0].encode(), s.discriminators[0].encode()});
    }
  }
  std::vector<NeighbourCentre> neighbours() const {
    std::vector<NeighbourCentre> out;
    for (const auto& [g, d] : centres) out.push_back({&g, &d});
    return out;
  }
  Config config;
  TrainingData data;
  std::unique_ptr<SampleScorer> scorer;
  CellTrainer trainer;
  std::vector<std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>> centres;
};

void expect_on(Individual& ind, const torch::Device& device) {
  for (const auto& p : ind.module().parameters()) EXPECT_EQ(p.device(), device);
  for (const auto& b : ind.module().buffers()) EXPECT_EQ(b.device(), device);
  for (const auto& [key, st] : ind.optimizer().state()) {
    const auto& s = static_cast<const torch::optim::AdamParamState&>(*st);
    EXPECT_EQ(s.exp_avg().device(), device);
    EXPECT_EQ(s.exp_avg_sq().device(), device);
  }
}

std::vector<std::vector<std::uint8_t>> bytes_of(const CellState& s) {
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& g : s.generators) out.push_back(g.encode());
  for (const auto& d : s.discriminators) out.push_back(d.encode());
  return out;
}

TEST(Gpu, ACellsIndividualsLiveOnTheDevice) {
  SKIP_WITHOUT_GPU();
  DeviceCell cell(toy_config(), gpu());
  CellState s = cell.trainer.initial_state(4, 4);
  cell.trainer.run_generation(s, cell.neighbours());
  ASSERT_FALSE(s.discriminators[0].optimizer().state().empty());  // Adam has stepped
  for (auto& g : s.generators) expect_on(g, gpu());
  for (auto& d : s.discriminators) expect_on(d, gpu());
  for (auto& g : s.neighbour_generators) expect_on(g, gpu());
}

TEST(Gpu, ImageNetworksAndTheirAdamStateLiveOnTheDevice) {
  SKIP_WITHOUT_GPU();
  for (NetworkKind kind : {NetworkKind::kMlp, NetworkKind::kDcgan, NetworkKind::kSngan}) {
    NetworkShape shape;
    shape.kind = kind;
    torch::manual_seed(1);
    Individual g(Role::kGenerator, shape, 2e-4, AdamSettings{}, LossKind::kBce, gpu());
    Individual d(Role::kDiscriminator, shape, 2e-4, AdamSettings{}, LossKind::kBce, gpu());
    const auto z = torch::randn({8, shape.latent_dim}, torch::TensorOptions().device(gpu()));
    g.optimizer().zero_grad();
    d.discriminator()->forward(g.generator()->forward(z)).mean().backward();
    g.optimizer().step();
    d.optimizer().zero_grad();
    d.discriminator()->forward(g.generator()->forward(z).detach()).mean().backward();
    d.optimizer().step();
    expect_on(g, gpu());
    expect_on(d, gpu());
    // The same bytes back on the CPU, and on the GPU again.
    const auto bytes = g.encode();
    const Individual on_cpu = Individual::decode(bytes, shape, AdamSettings{}, true, torch::kCPU);
    EXPECT_EQ(on_cpu.encode(), bytes);
    const Individual again = Individual::decode(on_cpu.encode(), shape, AdamSettings{}, true, gpu());
    EXPECT_EQ(again.encode(), bytes);
  }
}

TEST(Gpu, TheSameSeedGivesTheSameBitsRunAfterRun) {
  SKIP_WITHOUT_GPU();
  std::vector<std::vector<std::vector<std::uint8_t>>> runs;
  std::vector<double> objectives;
  for (int run = 0; run < 2; ++run) {
    DeviceCell cell(toy_config(), gpu());
    CellState s = cell.trainer.initial_state(4, 4);
    for (int g = 0; g < 3; ++g) cell.trainer.run_generation(s, cell.neighbours());
    runs.push_back(bytes_of(s));
    objectives.push_back(s.mixture_objective);
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(objectives[0], objectives[1]);
}

// The centres of a 2x2 toy block on the GPU after 2 generations, its cells
// begun together (the default there) or one by one.
std::vector<Bytes> block_centres_on_gpu(bool games_together) {
  Config c = toy_config();
  c.training.population_size = 2;
  c.training.replacement = ReplacementRule::kIfBetter;
  c.training.loss = LossKind::kMustangs;
  const TrainingData data(c, gpu());
  const std::unique_ptr<SampleScorer> scorer = make_scorer(c, gpu());
  CellBlock block(c, GridShape(2, 2), {0, 1, 2, 3}, data, *scorer);
  EXPECT_EQ(block.cells_per_game(), 4u);  // a toy: every cell at once on a GPU
  if (!games_together) block.set_cells_per_game(1);
  for (int g = 0; g < 2; ++g) block.run_generation({});
  std::vector<Bytes> out;
  for (const auto& [cell, centre] : block.centres({0, 1, 2, 3})) {
    out.push_back(centre.first);
    out.push_back(centre.second);
  }
  return out;
}

// The mixture's samples on a GPU draw their latent vectors there, from a
// generator of the cell's own: they repeat, and they are not the CPU
// generator's numbers.
TEST(Gpu, MixtureSamplesDrawTheirLatentsWhereTheGeneratorIs) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(1);
  Individual g(Role::kGenerator, network_shape(toy_config()), 1e-3, AdamSettings{}, LossKind::kBce, gpu());
  std::vector<Individual*> one{&g};
  at::Generator first = generator_on(gpu(), 5), again = generator_on(gpu(), 5), cpu = generator_on(torch::kCPU, 5);
  const torch::Tensor samples = sample_mixture(one, {1.0}, 300, first);
  ASSERT_TRUE(samples.is_cuda());
  EXPECT_TRUE(torch::equal(samples, sample_mixture(one, {1.0}, 300, again)));
  EXPECT_FALSE(torch::allclose(samples.cpu(), sample_mixture(one, {1.0}, 300, cpu).cpu()));
}

TEST(Gpu, CellsBegunTogetherGiveTheBitsOfCellsBegunOneByOne) {
  SKIP_WITHOUT_GPU();
  const std::vector<Bytes> together = block_centres_on_gpu(true);
  EXPECT_EQ(together, block_centres_on_gpu(false));
}

// Two cells' fitness games on the GPU, played together (their losses in one
// set of kernels, each pair's mean summed in fixed order) and alone: every
// fitness has the same bits, each generator with its own mustangs kind.
TEST(Gpu, CellsWhoseGameLossesAreTakenTogetherGetTheBitsOfEachCellAlone) {
  SKIP_WITHOUT_GPU();
  Config c = toy_config();
  c.training.population_size = 3;
  c.training.loss = LossKind::kMustangs;
  DeviceCell cell(c, gpu());
  struct Players {
    CellState state;
    GenerationWorkingSet work;
    std::vector<Individual*> g, d;
  };
  std::vector<Players> cells(2);
  for (int k = 0; k < 2; ++k) {
    Players& p = cells[static_cast<std::size_t>(k)];
    p.state = cell.trainer.initial_state(2 * k, 4);
    p.state.generation = k;  // other seeds, other draws
    seed_generation(c, p.state, p.work);
    draw_generation_losses(c.training, p.state, p.work.rng);
    draw_fitness_samples(c.training, cell.data, c.network.latent_dim, p.work);
    for (auto& g : p.state.generators) p.g.push_back(&g);
    for (auto& d : p.state.discriminators) p.d.push_back(&d);
  }
  const auto fitness = [&cells] {
    std::vector<double> out;
    for (const Players& p : cells)
      for (const std::vector<Individual*>* who : {&p.g, &p.d})
        for (const Individual* i : *who) out.push_back(i->fitness);
    return out;
  };
  PairGame alone;
  for (Players& p : cells) alone.play(p.g, p.d, p.work.fitness_real, p.work.fitness_latent, BceForm::kPyTorch, nullptr);
  const std::vector<double> one_by_one = fitness();
  for (Players& p : cells)
    for (std::vector<Individual*>* who : {&p.g, &p.d})
      for (Individual* i : *who) i->fitness = 0.0;
  PairGame together;
  together.play_cells({{cells[0].g, cells[0].d, cells[0].work.fitness_real, cells[0].work.fitness_latent, nullptr},
                       {cells[1].g, cells[1].d, cells[1].work.fitness_real, cells[1].work.fitness_latent, nullptr}},
                      BceForm::kPyTorch);
  const std::vector<double> both = fitness();
  for (const double f : both) EXPECT_TRUE(std::isfinite(f));
  EXPECT_EQ(both, one_by_one);
  EXPECT_NE(one_by_one[0], one_by_one[6]);  // the cells differ
}

TEST(Gpu, ACheckpointGoesGpuToCpuToGpuAndTrainsOnBoth) {
  SKIP_WITHOUT_GPU();
  DeviceCell on_gpu(toy_config(), gpu());
  CellState s = on_gpu.trainer.initial_state(4, 4);
  on_gpu.trainer.run_generation(s, on_gpu.neighbours());
  const Bytes saved = encode_cell_state(s);
  CellState cpu_state = decode_cell_state(saved, on_gpu.config, "gpu checkpoint", torch::kCPU);
  EXPECT_EQ(encode_cell_state(cpu_state), saved);
  for (auto& g : cpu_state.generators) expect_on(g, torch::Device(torch::kCPU));
  CellState gpu_state = decode_cell_state(encode_cell_state(cpu_state), on_gpu.config, "cpu checkpoint", gpu());
  EXPECT_EQ(encode_cell_state(gpu_state), saved);
  // Both go on training from it.
  DeviceCell on_cpu(toy_config(), torch::kCPU);
  const GenerationRecord a = on_cpu.trainer.run_generation(cpu_state, on_cpu.neighbours());
  const GenerationRecord b = on_gpu.trainer.run_generation(gpu_state, on_gpu.neighbours());
  EXPECT_EQ(cpu_state.generation, 2);
  EXPECT_EQ(gpu_state.generation, 2);
  EXPECT_TRUE(std::isfinite(a.generator_loss) && std::isfinite(b.generator_loss));
}

// The GPU draws its latent vectors and batches from its own generator, so
// a GPU run is the CPU run with other random numbers, from the same initial
// weights. Its fitness (a mean loss over fitness_samples = 100 draws of
// the BCE, whose spread per draw is below 0.5 at these early generations)
// then differs by the sampling error of two means: a standard deviation of
// at most 0.5 * sqrt(2 / 100) = 0.07. The tolerance is three of those.
TEST(Gpu, AToyRunsLossesOnTheGpuAreTheCpusWithinSamplingNoise) {
  SKIP_WITHOUT_GPU();
  std::vector<GenerationRecord> records[2];
  for (int i = 0; i < 2; ++i) {
    DeviceCell cell(toy_config(), i == 0 ? torch::Device(torch::kCPU) : gpu());
    CellState s = cell.trainer.initial_state(4, 4);
    for (int g = 0; g < 3; ++g) records[i].push_back(cell.trainer.run_generation(s, cell.neighbours()));
  }
  for (std::size_t g = 0; g < records[0].size(); ++g) {
    SCOPED_TRACE("generation " + std::to_string(g + 1));
    EXPECT_NEAR(records[0][g].generator_loss, records[1][g].generator_loss, 0.21);
    EXPECT_NEAR(records[0][g].discriminator_loss, records[1][g].discriminator_loss, 0.21);
  }
}

// Sums in place like an all-reduce of two identical workers.
class Doubling final : public GradientAllreduce {
 public:
  std::optional<Interruption> sum(std::vector<float>& values) override {
    for (float& v : values) v *= 2.0f;
    return std::nullopt;
  }
  WorkerExchange& exchange() override { throw std::logic_error("Doubling has no exchange"); }
};

#define SKIP_WITHOUT_GRAPHS()                                                                     \
  do {                                                                                            \
    if (visible_gpus() == 0) GTEST_SKIP() << "no GPU is visible";                                \
    if (!CudaStepGraph::built()) GTEST_SKIP() << "this build has no CUDA graphs (LibTorch without CUDA)"; \
  } while (0)

TEST(Gpu, ACudaStepGraphReplaysWhatTheStepDoes) {
  SKIP_WITHOUT_GRAPHS();
  const torch::Tensor x = torch::zeros({1000}, gpu());
  CudaStepGraph graph;
  const int steps = CudaStepGraph::kWarmups + 5;
  for (int i = 0; i < steps; ++i) graph.run([&x] { x.mul_(2.0).add_(1.0); });
  EXPECT_TRUE(graph.replaying());
  EXPECT_FALSE(graph.gave_up());
  EXPECT_TRUE(torch::equal(x.cpu(), torch::full({1000}, std::pow(2.0, steps) - 1.0)));
}

// Cells 1, 4 and 7 of `c` (population_size pairs each, built from the
// seed and the cell as CellTrainer::initial_state() builds them) trained in
// lockstep on the GPU for 8 batches, the steps replayed from the fourth on
// with `cuda_graphs` where each plays its own opponents (population 1).
// Their trained copies' bytes, cell by cell.
std::vector<Bytes> lockstep_on_gpu(const Config& c, bool cuda_graphs) {
  const TrainingData data(c, gpu());
  const NetworkShape shape = network_shape(c);
  const auto lock = lock_torch_generator();
  std::vector<std::unique_ptr<GenerationWorkingSet>> works;
  std::vector<LockstepCell> cells;
  for (int k : {1, 4, 7}) {
    torch::manual_seed(derive_seed(c.seed, Stream::kCellInit, static_cast<std::uint64_t>(k)));
    CellState s;
    s.cell = k;
    works.push_back(std::make_unique<GenerationWorkingSet>());
    GenerationWorkingSet& w = *works.back();
    w.device = gpu();
    seed_generation(c, s, w);
    for (std::int64_t i = 0; i < c.training.population_size; ++i) {
      const AdamSettings adam{c.training.adam_beta1, c.training.adam_beta2};
      w.selected_generators.emplace_back(Role::kGenerator, shape, c.training.learning_rate, adam, c.training.loss,
                                         gpu());
      w.selected_discriminators.emplace_back(Role::kDiscriminator, shape, c.training.learning_rate, adam,
                                             discriminator_loss_for(c.training.loss), gpu());
    }
    cells.push_back({k, &w});
  }
  // 34 batches: the latent vectors drawn at steps 0, 16 and 32, between replays.
  train_in_lockstep(c.training, data, 34, c.network.latent_dim, cells, cuda_graphs);
  std::vector<Bytes> out;
  for (const auto& w : works) {
    for (const Individual& g : w->selected_generators) out.push_back(g.encode());
    for (const Individual& d : w->selected_discriminators) out.push_back(d.encode());
  }
  return out;
}

// The toy cells with every step mutated.
Config toy_lockstep_config() {
  Config c = toy_config();
  c.training.mutation_probability = 1.0;
  return c;
}

// The DCGAN pair (its discriminator drops out) on 120 synthetic 28x28
// images written to `folder`, batches of 6.
Config dcgan_lockstep_config(const std::string& folder, const std::string& loss, int population) {
  std::vector<std::uint8_t> labels;
  write_idx_images(folder + "/train-images-idx3-ubyte", test::synthetic_idx_images(120, 3, labels));
  write_idx_labels(folder + "/train-labels-idx1-ubyte", labels);
  return parse_config(fmt::format("seed: 9\ndata: {{dataset: idx, path: {}}}\n"
                                  "network: {{kind: dcgan, latent_dim: 8}}\ngrid: {{rows: 3, cols: 3}}\n"
                                  "training: {{batch_size: 6, loss: {}, population_size: {}, mutation_probability: 1}}\n",
                                  folder, loss, population),
                      "dcgan.yaml");
}

void expect_same_copies(const std::vector<Bytes>& a, const std::vector<Bytes>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "copy " << i << " (cell by cell, G then D)";
}

// Each step takes its latent vectors (drawn on the GPU 16 steps' worth at a
// time) and a DCGAN discriminator's staged dropout masks before it runs or
// is replayed: the replayed steps read them as the ordinary steps do.
TEST(Gpu, LockstepStepsReplayedAsCudaGraphsGiveTheBitsOfTheOrdinarySteps) {
  SKIP_WITHOUT_GRAPHS();
  ASSERT_FALSE(CudaStepGraph::a_capture_failed()) << "a capture failed before this test";
  std::int64_t before = CudaStepGraph::replays();
  expect_same_copies(lockstep_on_gpu(toy_lockstep_config(), false), lockstep_on_gpu(toy_lockstep_config(), true));
  ASSERT_FALSE(CudaStepGraph::a_capture_failed()) << "the toy's steps ran without graphs";
  EXPECT_GT(CudaStepGraph::replays(), before) << "the toy's steps were never replayed";
  before = CudaStepGraph::replays();
  TempDir tmp;
  const Config dcgan = dcgan_lockstep_config(tmp.path().string(), "bce", 1);
  expect_same_copies(lockstep_on_gpu(dcgan, false), lockstep_on_gpu(dcgan, true));
  EXPECT_FALSE(CudaStepGraph::a_capture_failed()) << "the DCGAN's steps ran without graphs";
  EXPECT_GT(CudaStepGraph::replays(), before) << "the DCGAN's steps were never replayed";
}

// A cell's generator on the GPU: on the device, seeded as
// torch::manual_seed() seeds the device's default generator (so its draws
// are the default generator's), and of its own (drawing from it leaves the
// default one where it was).
TEST(Gpu, ACellsGeneratorOnTheGpuIsAGeneratorOfItsOwnSeededAsTheDefaultOne) {
  SKIP_WITHOUT_GPU();
  const auto lock = lock_torch_generator();
  const torch::TensorOptions on_gpu = torch::TensorOptions().dtype(torch::kFloat32).device(gpu());
  const at::Generator own = generator_on(gpu(), 77);
  EXPECT_TRUE(own.device().is_cuda());
  EXPECT_EQ(own.current_seed(), 77u);
  torch::manual_seed(77);
  const torch::Tensor by_default = torch::randn({4096}, on_gpu).cpu();
  torch::manual_seed(77);
  const torch::Tensor first_by_default = torch::rand({64}, on_gpu).cpu();
  torch::manual_seed(77);
  const torch::Tensor drawn = torch::randn({4096}, own, on_gpu);
  EXPECT_TRUE(drawn.is_cuda());
  EXPECT_TRUE(torch::equal(drawn.cpu(), by_default));
  EXPECT_TRUE(torch::equal(torch::rand({64}, on_gpu).cpu(), first_by_default))
      << "its draws moved the default generator";
}

// Cells 2, 5 (two members) and 7 in one stack, and cell 5 alone: cell 5's
// rows are the same bits, drawn on the GPU; and again from new generators.
TEST(Gpu, ACellsDrawsOnTheGpuDoNotDependOnItsStackAndRepeat) {
  SKIP_WITHOUT_GPU();
  const auto cells = [](std::vector<std::uint64_t> seeds) {
    std::vector<at::Generator> out;
    for (const std::uint64_t s : seeds) out.push_back(generator_on(gpu(), s));
    return out;
  };
  const auto three = [&] {
    const std::vector<at::Generator> g = cells({2, 5, 7});
    return std::vector<at::Generator>{g[0], g[1], g[1], g[2]};
  };
  const auto alone = [&] {
    const at::Generator g = generator_on(gpu(), 5);
    return std::vector<at::Generator>{g, g};
  };
  const torch::TensorOptions on_gpu = torch::TensorOptions().dtype(torch::kFloat32).device(gpu());
  for (int kind = 0; kind < 4; ++kind) {
    SCOPED_TRACE(kind == 0 ? "normal" : kind == 1 ? "uniform" : kind == 2 ? "dropout rows" : "stacked_dropout");
    const auto draw = [&](std::int64_t members, const std::vector<at::Generator>& g) {
      torch::Tensor into = torch::empty({members, 6, 32, 14, 14}, on_gpu);
      if (kind == 0) draw_normal_rows(into, g);
      if (kind == 1) draw_uniform_rows(into, g);
      if (kind == 2) draw_dropout_rows(into, 0.3, g);
      if (kind == 3) into = stacked_dropout(torch::ones_like(into), 0.3, true, g);
      EXPECT_TRUE(into.is_cuda());
      return into.cpu();
    };
    const torch::Tensor stacked = draw(4, three());
    const torch::Tensor own = draw(2, alone());
    EXPECT_TRUE(torch::equal(stacked[1], own[0]));
    EXPECT_TRUE(torch::equal(stacked[2], own[1]));
    EXPECT_FALSE(torch::equal(stacked[1], stacked[2]));
    EXPECT_FALSE(torch::equal(stacked[0], stacked[1]));
    EXPECT_TRUE(torch::equal(draw(4, three()), stacked));
  }
}

// The same lockstep run on the GPU twice: the same bits. Toy cells with
// WGAN-GP (shares drawn on the GPU) and population 2 (each member plays a
// copy of the opponent its cell's stream picks); the DCGAN pair with
// dropout, at population 1 (masks staged) and with WGAN-GP at population 2
// (the copies draw their masks in the step).
TEST(Gpu, LockstepOnTheGpuGivesTheSameBitsRunAfterRun) {
  SKIP_WITHOUT_GPU();
  Config toy = toy_lockstep_config();
  toy.training.loss = LossKind::kWganGp;
  toy.training.population_size = 2;
  TempDir tmp;
  for (const Config& c : {toy, dcgan_lockstep_config(tmp.path().string(), "bce", 1),
                          dcgan_lockstep_config(tmp.path().string(), "wgan_gp", 2)}) {
    SCOPED_TRACE(std::string(to_string(c.network.kind)) + ", " + to_string(c.training.loss) + ", population " +
                 std::to_string(c.training.population_size));
    const std::vector<Bytes> first = lockstep_on_gpu(c, false);
    expect_same_copies(first, lockstep_on_gpu(c, false));
  }
}

TEST(Gpu, TheHostStagedAllreduceSumsGpuTensorsAsCpuOnes) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(2);
  std::vector<torch::Tensor> cpu = {torch::randn({300}), torch::randn({7, 11}), torch::randn({1})};
  std::vector<torch::Tensor> on_gpu;
  for (const auto& t : cpu) on_gpu.push_back(t.to(gpu()));
  for (std::int64_t fusion : {std::int64_t{16}, std::int64_t{64} << 20}) {
    Doubling a, b;
    ASSERT_FALSE(allreduce_fused(cpu, fusion, a).has_value());
    ASSERT_FALSE(allreduce_fused(on_gpu, fusion, b).has_value());
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      EXPECT_EQ(on_gpu[i].device(), gpu());
      EXPECT_TRUE(torch::equal(on_gpu[i].cpu(), cpu[i]));
    }
  }
}

// NCCL on one GPU (W = 1): the join works, and a sum over one worker
// leaves the values as they are, for GPU tensors packed and unpacked by
// allreduce_fused (several buffers) and for a host buffer staged through
// the GPU; each sum is one NCCL call.
TEST(Gpu, NcclJoinsAndSumsOnOneGpu) {
  SKIP_WITHOUT_GPU();
  if (!nccl_built()) GTEST_SKIP() << "this build has no NCCL";
  InProcessNetwork network(1);
  const auto comm = network.communicator(0);
  test::CommunicatorExchange exchange(*comm);
  Waited<std::unique_ptr<GradientAllreduce>> joined = join_nccl(exchange, 0);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<GradientAllreduce>>(joined));
  GradientAllreduce& reduce = *std::get<std::unique_ptr<GradientAllreduce>>(joined);
  ASSERT_TRUE(reduce.sums_on_device());
  torch::manual_seed(3);
  const std::vector<torch::Tensor> cpu = {torch::randn({300}), torch::randn({7, 11}), torch::randn({1})};
  std::vector<torch::Tensor> on_gpu;
  for (const auto& t : cpu) on_gpu.push_back(t.to(gpu()));
  ASSERT_FALSE(allreduce_fused(on_gpu, 16, reduce).has_value());  // a buffer per tensor
  for (std::size_t i = 0; i < cpu.size(); ++i) EXPECT_TRUE(torch::equal(on_gpu[i].cpu(), cpu[i]));
  EXPECT_EQ(reduce.tally().messages, 3u);
  std::vector<float> host = {1.5f, -2.0f, 3.25f};
  ASSERT_FALSE(reduce.sum(host).has_value());
  EXPECT_EQ(host, (std::vector<float>{1.5f, -2.0f, 3.25f}));
}

// The toy 2x2 job on CUDA, twice: it finishes, says where it ran, and
// repeats to the bit. `runtime` is added to the runtime section.
void expect_job_on_gpu_repeats(const std::map<std::string, std::string>& replace, int workers,
                               const std::string& runtime = "") {
  TempDir tmp;
  std::string ensembles[2];
  for (int run = 0; run < 2; ++run) {
    const std::string dir = tmp.file("run" + std::to_string(run));
    auto changes = replace;
    changes["heartbeat_interval_ms: 100}"] = "heartbeat_interval_ms: 100, device: cuda" + runtime + "}";
    const auto out = run_one_process_job(test::toy_config(tmp, "run" + std::to_string(run), dir, changes), workers);
    ASSERT_TRUE(out.result.has_value()) << out.master_error;
    const auto result = nlohmann::json::parse(read_bytes(dir + "/result.json"));
    EXPECT_EQ(result.at("device").at("master"), "cuda:0");
    EXPECT_EQ(result.at("device").at("workers"), nlohmann::json(std::vector<std::string>(workers, "cuda:0")));
    ensembles[run] = read_bytes(dir + "/ensemble.bin");
  }
  EXPECT_EQ(ensembles[0], ensembles[1]);
}

TEST(Gpu, ACoevolutionJobOnCudaRecordsItsDevicesAndRepeats) {
  SKIP_WITHOUT_GPU();
  expect_job_on_gpu_repeats({}, 2);
}

// Two workers that are threads of one process, each capturing and
// replaying its steps' CUDA graphs at the same time as the other.
TEST(Gpu, ACoevolutionJobWithCudaGraphsInTwoThreadsRepeats) {
  SKIP_WITHOUT_GPU();
  const std::int64_t before = CudaStepGraph::replays();
  expect_job_on_gpu_repeats({}, 2, ", cuda_graphs: on");
  EXPECT_FALSE(CudaStepGraph::a_capture_failed()) << "the job's steps ran without graphs";
  EXPECT_GT(CudaStepGraph::replays(), before) << "the job's steps were never replayed";
}

TEST(Gpu, ADataParallelJobOnCudaRecordsItsDevicesAndRepeats) {
  SKIP_WITHOUT_GPU();
  expect_job_on_gpu_repeats({{"grid: {rows: 2, cols: 2}", "layout: data_parallel\ngrid: {rows: 1, cols: 1}"}}, 2);
}

// One worker on one GPU with allreduce nccl (joined, then never summing:
// one replica has nothing to add) trains the ring's replica to the bit.
TEST(Gpu, ADataParallelJobWithNcclOnOneGpuIsTheRingsJob) {
  SKIP_WITHOUT_GPU();
  if (!nccl_built()) GTEST_SKIP() << "this build has no NCCL";
  TempDir tmp;
  std::string ensembles[2];
  const char* kinds[2] = {"nccl", "ring"};
  for (int run = 0; run < 2; ++run) {
    const std::string dir = tmp.file(kinds[run]);
    const auto out = run_one_process_job(
        test::toy_config(tmp, kinds[run], dir,
                         {{"heartbeat_interval_ms: 100}", "heartbeat_interval_ms: 100, device: cuda}"},
                          {"grid: {rows: 2, cols: 2}", std::string("layout: data_parallel\ngrid: {rows: 1, cols: 1}\n"
                                                                   "data_parallel: {allreduce: ") + kinds[run] + "}"}}),
        1);
    ASSERT_TRUE(out.result.has_value()) << kinds[run] << ": " << out.master_error;
    ensembles[run] = read_bytes(dir + "/ensemble.bin");
  }
  EXPECT_EQ(ensembles[0], ensembles[1]);
}

}  // namespace
}  // namespace cellgan
