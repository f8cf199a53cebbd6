// The outputs of a sweep (see sweep_outputs.h).
#include "sweep/sweep_outputs.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/image_files.h"
#include "common/run_files.h"
#include "sweep/run_record.h"
#include "sweep/sweep_plots.h"

namespace cellgan::sweep {

namespace fs = std::filesystem;

namespace {

// Appends `key` to `keys` unless it is there.
void add_key(std::vector<std::string>& keys, const std::string& key) {
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
}

// Adds the keys recorded in `folder`'s kVariedKeysFile (none without one) to `keys`.
void add_recorded_varied_keys(const fs::path& folder, std::vector<std::string>& keys) {
  std::ifstream in(folder / kVariedKeysFile);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) add_key(keys, line);
}

}  // namespace

void record_varied_keys(const std::string& runs_root, const std::vector<std::string>& keys) {
  std::vector<std::string> all;
  add_recorded_varied_keys(runs_root, all);
  for (const std::string& key : keys) add_key(all, key);
  if (all.empty()) return;
  std::string text;
  for (const std::string& key : all) text += key + "\n";
  fs::create_directories(runs_root);
  write_file_atomic((fs::path(runs_root) / kVariedKeysFile).string(), text);
}

OutputsReport write_sweep_outputs(const std::string& runs_root, const std::string& out, SweepNotes notes) {
  OutputsReport report;
  std::vector<RunRecord> records;
  for (const std::string& folder : find_run_folders(runs_root)) {
    try {
      if (auto r = read_run_record(folder)) {
        if (r->finished && r->workers <= 0) {
          report.unreadable.push_back(
              fmt::format("{}: no {} names its worker count", folder, run_files::kRunState));
          continue;
        }
        if (!r->finished && r->status == "failed") {  // not to be resumed: listed as failed, once
          const std::string name = fs::path(folder).filename().string();
          if (std::none_of(notes.failed.begin(), notes.failed.end(),
                           [&](const std::string& f) { return f.rfind(name + ":", 0) == 0; }))
            notes.failed.push_back(fmt::format("{}: failed: {}", name, r->message));
          continue;
        }
        if (!r->finished) {
          report.unfinished.push_back(folder);
          const std::string name = fs::path(folder).filename().string();
          if (std::find(notes.unfinished.begin(), notes.unfinished.end(), name) == notes.unfinished.end())
            notes.unfinished.push_back(name);
        }
        records.push_back(std::move(*r));
      }
    } catch (const std::exception& e) {
      report.unreadable.push_back(fmt::format("{}: {}", folder, e.what()));
    }
  }
  for (const std::string& line : report.unreadable) notes.failed.push_back("unreadable: " + line);
  for (const fs::path& folder : {fs::path(runs_root), fs::path(runs_root) / "runs"})
    add_recorded_varied_keys(folder, notes.varied_keys);
  keep_varied_keys(records, notes.varied_keys);
  const std::vector<SweepRow> rows = sweep_rows(records);
  report.rows = static_cast<int>(rows.size());
  report.counts = counts_text(rows, notes);
  fs::create_directories(out);
  write_file_atomic((fs::path(out) / "sweep.csv").string(), csv_text(rows));
  if (!rows.empty()) {
    notes.plots = write_plot_files(rows, out);
    report.plot_error = draw_plots(out);
    if (!report.plot_error.empty()) notes.plots.clear();
  }
  write_file_atomic((fs::path(out) / "sweep.md").string(), markdown_text(rows, notes));
  return report;
}

}  // namespace cellgan::sweep
