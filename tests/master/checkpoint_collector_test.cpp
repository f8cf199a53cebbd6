// The master's checkpoint manifests: complete only when every cell's file
// is in, in any order, with the older checkpoints pruned.
#include "master/checkpoint_collector.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "tests/common/test_files.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;

CheckpointMessage saved(const std::string& dir, std::int64_t generation, std::vector<int> cells, double seconds) {
  CheckpointMessage m{generation, {}, seconds, {}};
  const CheckpointId id{generation, 1, 2, 2};
  for (int cell : cells) m.files.push_back(write_cell_checkpoint(checkpoint_folder(dir, generation), id, cell, Bytes{1, 2}));
  return m;
}

// The master makes metrics.jsonl durable in this hook: it must run before
// the manifest exists, once per completed checkpoint, and not for a partial one.
TEST(CheckpointCollector, TheHookRunsJustBeforeEachManifest) {
  test::TempDir tmp;
  const std::string dir = tmp.path().string();
  std::vector<bool> manifest_there;
  CheckpointCollector c(dir, 7, 2, 2, 2, 2, [&] {
    manifest_there.push_back(fs::exists(fs::path(checkpoint_folder(dir, 2)) / "manifest.json"));
  });
  EXPECT_FALSE(c.take(saved(dir, 2, {0}, 0.1)));
  EXPECT_TRUE(manifest_there.empty());
  ASSERT_TRUE(c.take(saved(dir, 2, {1}, 0.1)));
  EXPECT_EQ(manifest_there, std::vector<bool>{false});
  EXPECT_TRUE(fs::exists(fs::path(checkpoint_folder(dir, 2)) / "manifest.json"));
}

TEST(CheckpointCollector, TheManifestIsWrittenOnceEveryCellIsIn) {
  test::TempDir tmp;
  const std::string dir = tmp.path().string();
  CheckpointCollector c(dir, 7, 2, 2, 4, 2);
  EXPECT_FALSE(c.take(saved(dir, 2, {0, 1}, 0.5)));
  EXPECT_FALSE(fs::exists(fs::path(checkpoint_folder(dir, 2)) / "manifest.json"));
  EXPECT_EQ(c.last(), 0);
  // The other worker is a generation ahead: its generation 4 comes first.
  EXPECT_FALSE(c.take(saved(dir, 4, {2, 3}, 0.1)));
  const auto line = c.take(saved(dir, 2, {2, 3}, 0.75));
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("checkpoint after generation 2 complete: 4 files"), std::string::npos) << *line;
  EXPECT_NE(line->find("written in 0.750 s"), std::string::npos) << *line;  // the slowest worker's time
  EXPECT_EQ(c.last(), 2);
  const CheckpointManifest m = read_complete_checkpoint(checkpoint_folder(dir, 2));
  EXPECT_EQ(m.generation, 2);
  EXPECT_EQ(m.seed, 7u);
  ASSERT_EQ(m.cells.size(), 4u);
  EXPECT_EQ(m.cells[3].cell, 3);
}

TEST(CheckpointCollector, KeepsTheNewestAndForgetsFilesAfterARestart) {
  test::TempDir tmp;
  const std::string dir = tmp.path().string();
  CheckpointCollector c(dir, 1, 1, 2, 2, 2);
  for (std::int64_t g : {1, 2, 3}) ASSERT_TRUE(c.take(saved(dir, g, {0, 1}, 0.0)));
  EXPECT_FALSE(fs::exists(checkpoint_folder(dir, 1))) << "keep 2: the oldest is deleted";
  EXPECT_TRUE(fs::exists(checkpoint_folder(dir, 3)));
  // Half of generation 5, then a rehoming back to 3: the half is dropped,
  // so the survivors' generation 5 is complete only with both cells again.
  EXPECT_FALSE(c.take(saved(dir, 5, {0}, 0.0)));
  c.restart_from(3);
  EXPECT_EQ(c.last(), 3);
  EXPECT_FALSE(c.take(saved(dir, 5, {1}, 0.0)));
  EXPECT_TRUE(c.take(saved(dir, 5, {0}, 0.0)));
}

}  // namespace
}  // namespace cellgan
