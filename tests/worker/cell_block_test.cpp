// A worker's block of cells: its cells read one another as they were when
// the generation began, although they begin one after another or together;
// its result message is the cells' ensembles; and a generation draws
// nothing from Torch's global generator.
#include "worker/cell_block.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>
#include <string>

#include "common/idx.h"
#include "common/nn/classifier.h"
#include "common/nn/training_data.h"
#include "grid/topology.h"
#include "tests/common/test_files.h"
#include "tests/nn/synthetic_images.h"

namespace cellgan {
namespace {

Config block_config() {
  return parse_config(R"(
seed: 5
data: {dataset: grid, toy_samples: 1000}
network: {kind: toy, latent_dim: 4, toy_hidden: 16}
grid: {rows: 3, cols: 3}
training: {generations: 3, batches_per_generation: 4, batch_size: 50, fitness_samples: 100, score_samples: 100,
           learning_rate: 1.0e-3}
)",
                      "test");
}

// The block's cells against a reference that trains every cell alone on
// copies of the centres taken before each generation.
void expect_the_generations_began_alike(const Config& config, std::size_t cells_per_game) {
  const TrainingData data(config);
  std::unique_ptr<SampleScorer> scorer = make_scorer(config);
  const GridShape grid(3, 3);
  std::vector<int> cells(9);
  std::iota(cells.begin(), cells.end(), 0);
  CellBlock block(config, grid, cells, data, *scorer);
  block.set_cells_per_game(cells_per_game);

  // The reference: before each generation, a copy of every centre; every
  // cell then trains on the copies of its neighbours.
  CellTrainer trainer(config, data, *scorer);
  std::vector<CellState> reference;
  for (int cell : cells)
    reference.push_back(trainer.initial_state(cell, static_cast<int>(neighbourhood(grid, cell, config.grid.neighbourhood).size()) - 1));
  for (int g = 0; g < 3; ++g) {
    block.run_generation({});
    std::vector<std::pair<Bytes, Bytes>> before;
    for (const CellState& s : reference) before.push_back({s.centre_generator().encode(), s.centre_discriminator().encode()});
    for (CellState& s : reference) {
      std::vector<NeighbourCentre> neighbours;
      const auto hood = neighbourhood(grid, s.cell, config.grid.neighbourhood);
      for (std::size_t k = 1; k < hood.size(); ++k) neighbours.push_back({&before[hood[k]].first, &before[hood[k]].second});
      trainer.run_generation(s, neighbours);
    }
  }

  const auto centres = block.centres(cells);
  const ResultMessage result = decode_result(block.encoded_results());
  ASSERT_EQ(result.cells, std::vector<std::int32_t>(cells.begin(), cells.end()));
  for (int cell : cells) {
    const CellState& s = reference[cell];
    EXPECT_EQ(centres.at(cell).first, s.centre_generator().encode()) << "cell " << cell;
    EXPECT_EQ(centres.at(cell).second, s.centre_discriminator().encode()) << "cell " << cell;
    EXPECT_EQ(result.ensembles[cell], CellTrainer::ensemble(s).encode()) << "cell " << cell;
  }
  EXPECT_THROW(block.centres({9}), std::logic_error);
}

TEST(CellBlock, CellsReadTheirBlockAsTheGenerationBeganIt) {
  expect_the_generations_began_alike(block_config(), /*cells_per_game=*/1);
}

// On a GPU every cell begins together, but a convolutional kind's game
// keeps to 64 discriminators; on the CPU the cells begin one by one.
TEST(CellBlock, HowManyCellsBeginTogether) {
  EXPECT_EQ(cells_per_game_on_gpu(NetworkKind::kMlp, 1, 5, 64), 64u);
  EXPECT_EQ(cells_per_game_on_gpu(NetworkKind::kToy, 4, 9, 9), 9u);
  EXPECT_EQ(cells_per_game_on_gpu(NetworkKind::kDcgan, 1, 5, 16), 12u);  // 12 games of 5 discriminators
  EXPECT_EQ(cells_per_game_on_gpu(NetworkKind::kSngan, 8, 9, 16), 4u);   // of 16
  EXPECT_EQ(cells_per_game_on_gpu(NetworkKind::kDcganConditional, 1, 5, 4), 4u);
  EXPECT_EQ(cells_per_game_on_gpu(NetworkKind::kDcgan, 100, 5, 16), 1u);
  const Config config = block_config();
  const TrainingData data(config);
  std::unique_ptr<SampleScorer> scorer = make_scorer(config);
  const CellBlock block(config, GridShape(3, 3), {0, 1, 2}, data, *scorer);
  EXPECT_EQ(block.cells_per_game(), 1u);
}

// The cells' fitness games (and the copies' scores) played in one
// PairGame::play_cells, all nine or in groups of 4, 4 and 1, as on a GPU:
// every cell's bits as when it begins alone. Population 2 with if_better,
// so that both games decide something.
TEST(CellBlock, CellsBegunTogetherGiveTheBitsOfCellsBegunAlone) {
  Config config = block_config();
  config.training.population_size = 2;
  config.training.replacement = ReplacementRule::kIfBetter;
  config.training.loss = LossKind::kMustangs;
  expect_the_generations_began_alike(config, /*cells_per_game=*/9);
  expect_the_generations_began_alike(config, /*cells_per_game=*/4);
}

// Every draw of a generation comes from the cells' own streams, none from
// Torch's process-wide generator (nor does building a copy of a network
// draw): the generator is as the test left it, for every kind and loss.
TEST(CellBlock, AGenerationDrawsNothingFromTorchsGlobalGenerator) {
  test::TempDir tmp;
  std::vector<std::uint8_t> labels;
  torch::save(ScoreClassifier(), tmp.file("classifier.pt"));  // untrained: the scores are not under test
  for (const char* set : {"train", "t10k"}) {
    write_idx_images(tmp.file(fmt::format("{}-images-idx3-ubyte", set)), test::synthetic_idx_images(120, 3, labels));
    write_idx_labels(tmp.file(fmt::format("{}-labels-idx1-ubyte", set)), labels);
  }
  const std::string images = fmt::format(
      "seed: 5\ndata: {{dataset: idx, path: {}}}\ngrid: {{rows: 2, cols: 2}}\n"
      "training: {{generations: 2, population_size: 2, batches_per_generation: 2, batch_size: 8, "
      "fitness_samples: 16, score_samples: 16, replacement: if_better}}\n",
      tmp.path().string());
  std::vector<std::pair<std::string, Config>> configs;
  configs.emplace_back("toy", block_config());
  Config mustangs = block_config();
  mustangs.training.population_size = 2;
  mustangs.training.loss = LossKind::kMustangs;
  configs.emplace_back("toy mustangs", mustangs);
  for (const char* kind : {"dcgan", "sngan", "dcgan_conditional"})
    configs.emplace_back(kind, parse_config(images + fmt::format("network: {{kind: {}, latent_dim: 16}}\n", kind), "test"));
  configs.emplace_back("dcgan wgan_gp", parse_config(images + "network: {kind: dcgan, latent_dim: 16}\n", "test"));
  configs.back().second.training.loss = LossKind::kWganGp;
  for (const auto& [name, config] : configs) {
    SCOPED_TRACE(name);
    const TrainingData data(config);
    std::unique_ptr<SampleScorer> scorer = make_scorer(config);
    const GridShape grid(config.grid.rows, config.grid.cols);
    std::vector<int> cells(static_cast<std::size_t>(grid.cell_count()));
    std::iota(cells.begin(), cells.end(), 0);
    CellBlock block(config, grid, cells, data, *scorer);
    torch::manual_seed(77);
    const torch::Tensor expected = torch::rand({4});
    torch::manual_seed(77);
    block.run_generation({});
    block.run_generation({});
    EXPECT_TRUE(torch::equal(torch::rand({4}), expected)) << "a generation drew from Torch's global generator";
  }
}

}  // namespace
}  // namespace cellgan
