// Checkpoints on disk (docs/operations.md, "Faults: what is survived"): where they live, how a cell's file and the
// manifest are written and read back, and which checkpoint a run resumes
// from.
//
// Layout, under a run directory:
//   checkpoints/gen-NNNNNN/cell-CCCC.bin   one per cell, written by the
//                                          worker that trains the cell
//   checkpoints/gen-NNNNNN/cell-CCCC.json  its record, written right after
//                                          it: the checkpoint, the file's
//                                          size and CRC-32
//   checkpoints/gen-NNNNNN/manifest.json   written by the master once every
//                                          cell's file is reported, with
//                                          each file's size and CRC-32
// A checkpoint is complete when its manifest exists and every file it
// lists has the size and checksum it records. The master writes the
// manifest once every cell's file is reported, or, after a lost worker,
// from the cells' records when every cell has one (a worker may save its
// cells and be lost before its report comes). Every file is written
// atomically (temporary file, rename; image_files.h), a cell's file
// fsynced before its record exists, and the manifest last, so a crash in
// the middle of a checkpoint never leaves one that looks complete.
//
// The bytes of a cell's file are the worker layout's business; this file
// only stores and checks them.
//
// Errors: readers throw InputError naming the file and what is wrong
// (missing, truncated, checksum mismatch, a manifest that does not parse).
// Writers throw std::runtime_error naming the path.
//
// Thread-safety: free functions; different cells' files may be written
// from different ranks at once.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"

namespace cellgan {

struct CheckpointFile {
  int cell = 0;
  std::string name;  // inside the checkpoint's folder: "cell-0003.bin"
  std::uint64_t bytes = 0;
  std::uint32_t crc32 = 0;
};

// What every file of one checkpoint shares.
struct CheckpointId {
  std::int64_t generation = 0;  // generations completed when it was taken
  std::uint64_t seed = 0;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

struct CheckpointManifest {
  std::int64_t generation = 0;  // generations completed when it was taken
  std::uint64_t seed = 0;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<CheckpointFile> cells;  // ascending by cell
};

// <output_dir>/checkpoints and <output_dir>/checkpoints/gen-NNNNNN.
std::string checkpoints_folder(const std::string& output_dir);
std::string checkpoint_folder(const std::string& output_dir, std::int64_t generation);

// Writes `bytes` as the cell's file in `folder` (created if needed),
// fsynced, then its record (cell-CCCC.json): from then on the cell's part
// of checkpoint `id` is on disk, whatever becomes of the writer.
CheckpointFile write_cell_checkpoint(const std::string& folder, const CheckpointId& id, int cell, const Bytes& bytes);
// Reads the cell's file and checks it against `file`.
Bytes read_cell_checkpoint(const std::string& folder, const CheckpointFile& file);
// The entry of `cell` in `manifest`; InputError if it has none.
const CheckpointFile& manifest_entry(const CheckpointManifest& manifest, int cell, const std::string& folder);

// Writes manifest.json in `folder`: the checkpoint becomes complete.
void write_manifest(const std::string& folder, const CheckpointManifest& manifest);
// Reads manifest.json of `folder` (the files it lists are checked only as
// each is read).
CheckpointManifest read_manifest(const std::string& folder);
// Reads manifest.json of `folder` and checks every file it lists.
CheckpointManifest read_complete_checkpoint(const std::string& folder);
// Whether `folder` holds manifest.json.
bool has_manifest(const std::string& folder);
// The manifest the cells' records in `folder` make when every cell of the
// grid has one; InputError otherwise ("... incomplete: no manifest.json,
// and 3 of the 4 cells saved", a record that does not parse, records of
// different checkpoints). The files are not checked.
CheckpointManifest manifest_from_records(const std::string& folder);
// Writes the manifest of every checkpoint folder of generation at most
// `at_most` that has none but a record for every cell: those checkpoints
// become complete (their files are checked when they are read). Returns
// the folders, ascending.
std::vector<std::string> complete_from_records(const std::string& output_dir, std::int64_t at_most);

// The newest complete checkpoint of a run directory, of at most generation
// `at_most` (newer folders are left out without a word). Checkpoints that
// fail their check are skipped, each with one line in `skipped`
// ("checkpoints/gen-000020: cell-0003.bin: checksum mismatch"). None when
// there is none.
struct ResumePoint {
  std::string folder;
  CheckpointManifest manifest;
};
std::optional<ResumePoint> newest_complete_checkpoint(
    const std::string& output_dir, std::vector<std::string>& skipped,
    std::int64_t at_most = std::numeric_limits<std::int64_t>::max());

// Deletes every checkpoint folder of the run older than the newest `keep`
// complete ones (incomplete ones among them too). Returns their names.
std::vector<std::string> prune_checkpoints(const std::string& output_dir, std::int64_t keep);

// Deletes the checkpoint folders taken after `generation`: a resumed run
// writes them again.
void remove_checkpoints_after(const std::string& output_dir, std::int64_t generation);

}  // namespace cellgan
