// Checkpoints on disk: a written checkpoint reads back whole; a truncated
// or altered file, a missing manifest or a foreign one is caught and
// named; every cell saved completes a checkpoint from the cells' records;
// the newest complete checkpoint is found past corrupt ones; pruning keeps
// the newest complete ones.
#include "common/checkpoint_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;
using test::read_bytes;
using test::TempDir;
using test::write_bytes;

Bytes bytes_of(int cell, std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i * 31 + static_cast<std::size_t>(cell));
  return b;
}

// A checkpoint of seed 7 on a 1x2 grid.
CheckpointId id_of(std::int64_t generation) { return CheckpointId{generation, 7, 1, 2}; }

// A complete 1x2 checkpoint of `generation` in run directory `run`.
CheckpointManifest write_checkpoint(const std::string& run, std::int64_t generation) {
  const std::string folder = checkpoint_folder(run, generation);
  CheckpointManifest m{generation, 7, 1, 2, {}};
  for (int cell : {0, 1})
    m.cells.push_back(write_cell_checkpoint(folder, id_of(generation), cell, bytes_of(cell, 1000 + generation)));
  write_manifest(folder, m);
  return m;
}

void expect_input_error(const std::function<void()>& f, const std::string& mentions) {
  try {
    f();
    ADD_FAILURE() << "no InputError; expected one mentioning '" << mentions << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
  }
}

TEST(CheckpointStore, AWrittenCheckpointReadsBackWhole) {
  TempDir tmp;
  const auto written = write_checkpoint(tmp.path().string(), 4);
  const std::string folder = checkpoint_folder(tmp.path().string(), 4);
  EXPECT_EQ(fs::path(folder).filename(), "gen-000004");
  const CheckpointManifest m = read_complete_checkpoint(folder);
  EXPECT_EQ(m.generation, 4);
  EXPECT_EQ(m.seed, 7u);
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.cells[1].crc32, written.cells[1].crc32);
  EXPECT_EQ(read_cell_checkpoint(folder, manifest_entry(m, 1, folder)), bytes_of(1, 1004));
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(folder))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST(CheckpointStore, DamagedFilesAreCaughtAndNamed) {
  TempDir tmp;
  const auto m = write_checkpoint(tmp.path().string(), 2);
  const std::string folder = checkpoint_folder(tmp.path().string(), 2);
  const std::string cell1 = folder + "/" + m.cells[1].name;
  std::string b = read_bytes(cell1);
  b[10] = static_cast<char>(b[10] ^ 1);
  write_bytes(cell1, b);
  expect_input_error([&] { read_complete_checkpoint(folder); }, "cell-0001.bin: checksum mismatch");
  write_bytes(cell1, b.substr(0, 100));
  expect_input_error([&] { read_complete_checkpoint(folder); }, "truncated");
  fs::remove(cell1);
  expect_input_error([&] { read_complete_checkpoint(folder); }, "cell-0001.bin: missing");
  write_bytes(folder + "/manifest.json", "{\"format\": 1, \"generation\": ");
  expect_input_error([&] { read_manifest(folder); }, "not a checkpoint manifest");
  fs::remove(folder + "/manifest.json");
  expect_input_error([&] { read_manifest(folder); }, "manifest.json: missing");
  expect_input_error([&] { manifest_entry(m, 5, folder); }, "no file for cell 5");
}

TEST(CheckpointStore, TheNewestCompleteCheckpointIsFoundPastDamagedOnes) {
  TempDir tmp;
  write_checkpoint(tmp.path().string(), 2);
  write_checkpoint(tmp.path().string(), 4);
  const auto m6 = write_checkpoint(tmp.path().string(), 6);
  // Generation 8 was being written when the run died: no manifest yet.
  write_cell_checkpoint(checkpoint_folder(tmp.path().string(), 8), id_of(8), 0, bytes_of(0, 10));
  // Generation 6 got corrupted.
  const std::string victim = checkpoint_folder(tmp.path().string(), 6) + "/" + m6.cells[0].name;
  write_bytes(victim, read_bytes(victim).substr(1));
  std::vector<std::string> skipped;
  const auto point = newest_complete_checkpoint(tmp.path().string(), skipped);
  ASSERT_TRUE(point.has_value());
  EXPECT_EQ(point->manifest.generation, 4);
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped[0].find("gen-000008: incomplete"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("gen-000006"), std::string::npos) << skipped[1];

  TempDir empty;
  skipped.clear();
  EXPECT_FALSE(newest_complete_checkpoint(empty.path().string(), skipped).has_value());
}

TEST(CheckpointStore, TheNewestCompleteCheckpointUpToAGenerationLeavesNewerFoldersOut) {
  TempDir tmp;
  for (int g : {2, 4, 6}) write_checkpoint(tmp.path().string(), g);
  write_cell_checkpoint(checkpoint_folder(tmp.path().string(), 8), id_of(8), 0, bytes_of(0, 10));  // in progress
  std::vector<std::string> skipped;
  const auto point = newest_complete_checkpoint(tmp.path().string(), skipped, 4);
  ASSERT_TRUE(point.has_value());
  EXPECT_EQ(point->manifest.generation, 4);
  EXPECT_TRUE(skipped.empty()) << skipped[0];
  EXPECT_EQ(newest_complete_checkpoint(tmp.path().string(), skipped, 5)->manifest.generation, 4);
  EXPECT_FALSE(newest_complete_checkpoint(tmp.path().string(), skipped, 1).has_value());
  EXPECT_TRUE(skipped.empty());
}

TEST(CheckpointStore, EveryCellSavedCompletesACheckpointWithoutItsReports) {
  // The worker of cell 1 saved it and was lost before its report reached
  // the master: no manifest, but both cells' files and records.
  TempDir tmp;
  const std::string run = tmp.path().string();
  write_checkpoint(run, 4);
  const std::string folder = checkpoint_folder(run, 6);
  const CheckpointFile cell0 = write_cell_checkpoint(folder, id_of(6), 0, bytes_of(0, 500));
  const CheckpointFile cell1 = write_cell_checkpoint(folder, id_of(6), 1, bytes_of(1, 700));
  std::vector<std::string> skipped;
  EXPECT_EQ(newest_complete_checkpoint(run, skipped)->manifest.generation, 4);
  const CheckpointManifest m = manifest_from_records(folder);
  EXPECT_EQ(m.generation, 6);
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(m.rows * m.cols, 2);
  ASSERT_EQ(m.cells.size(), 2u);
  EXPECT_EQ(m.cells[0].crc32, cell0.crc32);
  EXPECT_EQ(m.cells[1].bytes, cell1.bytes);
  // Only generations up to the one given are completed.
  EXPECT_TRUE(complete_from_records(run, 5).empty());
  EXPECT_FALSE(has_manifest(folder));
  EXPECT_EQ(complete_from_records(run, 6), std::vector<std::string>{folder});
  skipped.clear();
  const auto point = newest_complete_checkpoint(run, skipped);
  ASSERT_TRUE(point.has_value());
  EXPECT_TRUE(skipped.empty()) << skipped[0];
  EXPECT_EQ(point->folder, folder);
  EXPECT_EQ(read_cell_checkpoint(folder, manifest_entry(point->manifest, 1, folder)), bytes_of(1, 700));
  EXPECT_TRUE(complete_from_records(run, 6).empty()) << "a manifest is written once";

  // A byte flipped after the record was written is caught by its checksum.
  fs::remove(folder + "/manifest.json");
  std::string b = read_bytes(folder + "/" + cell0.name);
  b[7] = static_cast<char>(b[7] ^ 1);
  write_bytes(folder + "/" + cell0.name, b);
  complete_from_records(run, 6);
  skipped.clear();
  EXPECT_EQ(newest_complete_checkpoint(run, skipped)->manifest.generation, 4);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("cell-0000.bin: checksum mismatch"), std::string::npos) << skipped[0];
}

TEST(CheckpointStore, ACheckpointWithACellUnsavedStaysIncomplete) {
  TempDir tmp;
  const std::string run = tmp.path().string();
  const std::string folder = checkpoint_folder(run, 6);
  write_cell_checkpoint(folder, id_of(6), 0, bytes_of(0, 500));
  // Cell 1's file was written, but its worker died before its record.
  write_bytes(folder + "/cell-0001.bin", "bytes");
  expect_input_error([&] { manifest_from_records(folder); }, "gen-000006: incomplete: no manifest.json, and 1 of the 2 cells saved");
  EXPECT_TRUE(complete_from_records(run, 6).empty());
  EXPECT_FALSE(has_manifest(folder));
  // Records of another checkpoint, or that do not parse, complete nothing.
  write_cell_checkpoint(folder, CheckpointId{6, 8, 1, 2}, 1, bytes_of(1, 500));
  expect_input_error([&] { manifest_from_records(folder); }, "are records of different checkpoints");
  write_bytes(folder + "/cell-0001.json", "{\"format\": 1, ");
  expect_input_error([&] { manifest_from_records(folder); }, "cell-0001.json: not a checkpoint record");
  EXPECT_TRUE(complete_from_records(run, 6).empty());
}

TEST(CheckpointStore, PruningKeepsTheNewestCompleteOnesAndTheOneInProgress) {
  TempDir tmp;
  for (int g : {2, 4, 6}) write_checkpoint(tmp.path().string(), g);
  write_cell_checkpoint(checkpoint_folder(tmp.path().string(), 8), id_of(8), 0, bytes_of(0, 10));  // in progress
  const auto removed = prune_checkpoints(tmp.path().string(), 2);
  EXPECT_EQ(removed, std::vector<std::string>{"gen-000002"});
  EXPECT_TRUE(fs::exists(checkpoint_folder(tmp.path().string(), 4)));
  EXPECT_TRUE(fs::exists(checkpoint_folder(tmp.path().string(), 8)));
  remove_checkpoints_after(tmp.path().string(), 4);
  EXPECT_FALSE(fs::exists(checkpoint_folder(tmp.path().string(), 6)));
  EXPECT_FALSE(fs::exists(checkpoint_folder(tmp.path().string(), 8)));
  EXPECT_TRUE(fs::exists(checkpoint_folder(tmp.path().string(), 4)));
}

}  // namespace
}  // namespace cellgan
