// Tests of the master's choice of the result (master/final_ensemble.h):
// the grid-wide ensemble is built from every cell's own generators with
// equal weights, and the best result follows the named objective.
#include "master/final_ensemble.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>
#include <stdexcept>
#include <vector>

#include "tests/nn/small_networks.h"

namespace cellgan {
namespace {


// A cell ensemble as CellTrainer::ensemble makes it: `own` local
// generators first, then `neighbours` neighbour centres.
Ensemble cell_ensemble(int cell, int own, int neighbours) {
  Ensemble e;
  e.cell = cell;
  e.shape = test::small_toy_shape();
  for (int i = 0; i < own + neighbours; ++i) {
    torch::manual_seed(static_cast<std::uint64_t>(100 * cell + i));
    e.generators.emplace_back(Role::kGenerator, e.shape, 1e-3, AdamSettings{}, LossKind::kBce);
  }
  e.weights.assign(e.generators.size(), 1.0 / static_cast<double>(e.generators.size()));
  return e;
}

TEST(GridEnsemble, TakesEachCellsOwnGeneratorsWithEqualWeights) {
  std::vector<Ensemble> cells;
  for (int c = 0; c < 3; ++c) cells.push_back(cell_ensemble(c, /*own=*/2, /*neighbours=*/3));
  const Ensemble grid = grid_ensemble(cells, /*population_size=*/2);
  EXPECT_EQ(grid.cell, kGridEnsemble);
  ASSERT_EQ(grid.generators.size(), 6u);
  ASSERT_EQ(grid.weights.size(), 6u);
  for (double w : grid.weights) EXPECT_DOUBLE_EQ(w, 1.0 / 6.0);
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(grid.generators[static_cast<std::size_t>(2 * c + i)].encode(false),
                cells[static_cast<std::size_t>(c)].generators[static_cast<std::size_t>(i)].encode(false))
          << "cell " << c << " generator " << i;
    }
  }
  // A copy: the grid ensemble does not share weights with the cells.
  {
    torch::NoGradGuard no_grad;
    for (auto& p : cells[0].generators[0].module().parameters()) p.add_(1.0);
  }
  EXPECT_NE(grid.generators[0].encode(false), cells[0].generators[0].encode(false));
  EXPECT_THROW(grid_ensemble({}, 1), std::invalid_argument);
}

TEST(GridEnsemble, SamplesEveryCellsGenerator) {
  std::vector<Ensemble> cells;
  for (int c = 0; c < 4; ++c) cells.push_back(cell_ensemble(c, 1, 2));
  Ensemble grid = grid_ensemble(cells, 1);
  EXPECT_EQ(Ensemble::sample_counts(grid.weights, 100), (std::vector<std::int64_t>{25, 25, 25, 25}));
  EXPECT_EQ(grid.sample(100, 7).sizes(), (std::vector<std::int64_t>{100, 2}));
}

TEST(BestResult, FollowsTheNamedObjectiveAndLabelsTheGrid) {
  std::vector<CellResult> results = {
      {0, {{"fid", 5.0}, {"mode_tvd", 0.2}}},
      {1, {{"fid", 3.0}, {"mode_tvd", 0.4}}},
      {kGridEnsemble, {{"fid", NAN}, {"mode_tvd", 0.1}}},
  };
  EXPECT_EQ(best_result(results, "fid"), 1u);       // a NaN score never wins
  EXPECT_EQ(best_result(results, "mode_tvd"), 2u);
  EXPECT_EQ(ensemble_label(results[2].cell), "grid");
  EXPECT_EQ(ensemble_label(3), "cell 3");
}

TEST(DropNonFiniteGenerators, NothingNonFiniteIsLeftToChoose) {
  std::vector<Ensemble> cells;
  for (int c = 0; c < 3; ++c) cells.push_back(cell_ensemble(c, /*own=*/1, /*neighbours=*/3));
  const auto poison = [](Individual& g) {
    torch::NoGradGuard no_grad;
    g.module().parameters()[0].fill_(std::numeric_limits<float>::quiet_NaN());
  };
  poison(cells[0].generators[2]);
  for (auto& g : cells[2].generators) poison(g);
  const std::vector<std::uint8_t> kept = cells[0].generators[3].encode(false);
  const std::vector<std::string> lines = drop_non_finite_generators(cells);
  EXPECT_EQ(lines, (std::vector<std::string>{"cell 0 ensemble: generator 2 non-finite: left out",
                                             "cell 2 ensemble: generator 3 non-finite: left out",
                                             "cell 2 ensemble: generator 2 non-finite: left out",
                                             "cell 2 ensemble: generator 1 non-finite: left out",
                                             "cell 2 ensemble: generator 0 non-finite: left out",
                                             "cell 2 ensemble: no finite generator with weight: left out of the choice"}));
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].cell, 0);
  ASSERT_EQ(cells[0].generators.size(), 3u);
  EXPECT_EQ(cells[0].generators[2].encode(false), kept);
  for (double w : cells[0].weights) EXPECT_DOUBLE_EQ(w, 1.0 / 3.0);
  EXPECT_EQ(cells[1].generators.size(), 4u);
  // An ensemble whose only finite generators have no weight is left out too.
  std::vector<Ensemble> weightless;
  weightless.push_back(cell_ensemble(5, 1, 1));
  poison(weightless[0].generators[0]);
  weightless[0].weights = {1.0, 0.0};
  drop_non_finite_generators(weightless);
  EXPECT_TRUE(weightless.empty());
}

}  // namespace
}  // namespace cellgan
