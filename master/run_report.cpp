// report.html (see run_report.h).
#include "master/run_report.h"

#include <fmt/format.h>

#include <boost/archive/iterators/base64_from_binary.hpp>
#include <boost/archive/iterators/transform_width.hpp>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/layout_description.h"
#include "common/image_files.h"
#include "common/run_files.h"
#include "common/run_lock.h"
#include "common/run_records.h"
#include "common/run_state.h"
#include "master/page_assets.h"
#include "master/run_history.h"

namespace cellgan {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kEventsShown = 200;

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script>: "</" would end the element.
std::string script_safe(std::string json_text) {
  for (std::size_t at = 0; (at = json_text.find("</", at)) != std::string::npos; at += 3) json_text.replace(at, 2, "<\\/");
  return json_text;
}

std::string base64(const std::string& bytes) {
  using namespace boost::archive::iterators;
  using Encoder = base64_from_binary<transform_width<std::string::const_iterator, 6, 8>>;
  std::string out(Encoder(bytes.begin()), Encoder(bytes.end()));
  out.append((3 - bytes.size() % 3) % 3, '=');
  return out;
}

std::string figure(const fs::path& png, const std::string& caption) {
  const auto bytes = read_file(png.string());
  if (!bytes) return "";
  return fmt::format("<figure><img alt=\"{0}\" src=\"data:image/png;base64,{1}\"><figcaption>{0}</figcaption></figure>",
                     html_escape(caption), base64(*bytes));
}

std::string images(const fs::path& dir, const LayoutDescription& layout) {
  std::string out = figure(dir / run_files::kSamples, layout.samples_caption());
  out += figure(dir / run_files::kClasses, "classes.png: one row per class, class 0 at the top");
  std::optional<fs::path> newest;
  if (fs::is_directory(dir / run_files::kPreviews))
    for (const auto& entry : fs::directory_iterator(dir / run_files::kPreviews))
      if (entry.path().extension() == ".png" && (!newest || entry.path().filename() > newest->filename()))
        newest = entry.path();
  if (newest) {
    const std::string name = newest->stem().string();  // gen-NNNNNN as the master writes it
    const bool numbered = name.size() > 4 && name.size() <= 22 && name.rfind("gen-", 0) == 0 &&
                          name.find_first_not_of("0123456789", 4) == std::string::npos;
    out += figure(*newest, numbered ? "the newest preview: generation " + std::to_string(std::stoll(name.substr(4)))
                                    : "the newest preview: " + newest->filename().string());
  }
  return out.empty() ? "<p>no samples yet</p>" : out;
}

std::string row(const std::string& key, const std::string& value) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>", key, html_escape(value));
}

std::string scores_text(const std::map<std::string, double>& scores) {
  std::string out;
  for (const auto& [name, value] : scores)
    if (!std::isnan(value)) out += fmt::format("{}{} {:.4f}", out.empty() ? "" : ", ", name, value);
  return out;
}

// What the report could not read, or found out of date: rows of the summary.
struct ReportNotes {
  bool abandoned = false;                // run.json says running, and no process here holds run.lock
  std::string unreadable_state;          // why run.json cannot be read ("" when it can)
  std::vector<std::string> unreadable;   // metrics.jsonl lines left out of the curves
};

std::string summary(const std::optional<RunState>& state, const std::optional<ResultRecord>& result,
                    const ReportNotes& notes) {
  std::string out = "<table>";
  if (!notes.unreadable_state.empty()) out += row("run.json", "unreadable: " + notes.unreadable_state);
  if (!notes.unreadable.empty())
    out += row("metrics.jsonl", fmt::format("{} line{} left out of the curves, the first: {}", notes.unreadable.size(),
                                            notes.unreadable.size() == 1 ? "" : "s", notes.unreadable.front()));
  if (state) {
    out += row("layout", state->layout);
    out += row("grid", fmt::format("{}x{}", state->rows, state->cols));
    out += row("workers", std::to_string(state->workers));
    const bool said = state->message.rfind(state->status, 0) == 0;  // "stopped after ..." says it already
    if (notes.abandoned)
      out += row("status", "running when last recorded, but no process on this host holds run.lock: if the job "
                           "ran here, it ended without saying how; continue it with --resume auto");
    else
      out += row("status",
                 state->message.empty() ? state->status : said ? state->message : state->status + ": " + state->message);
    out += row("generations", fmt::format("{} of {}", state->generation, state->generations));
    out += row("wall time", fmt::format("{:.1f} s in {} stretch{}", state->seconds, state->stretches,
                                        state->stretches == 1 ? "" : "es"));
    out += row("seed", std::to_string(state->seed));
  }
  if (result) {
    // best_label names it as the layout does; older runs have only best.
    out += row("best", !result->best_label.empty() ? result->best_label : !result->best.empty() ? result->best : "?");
    out += row("its scores", scores_text(result->scores));
  }
  return out + "</table>";
}

// The last kEventsShown lines of events.log, escaped, and how many it has.
std::pair<std::string, std::size_t> events_tail(const fs::path& path) {
  std::ifstream in(path);
  std::deque<std::string> kept;
  std::size_t total = 0;
  for (std::string line; std::getline(in, line); ++total) {
    kept.push_back(std::move(line));
    if (kept.size() > kEventsShown) kept.pop_front();
  }
  std::string out;
  for (const std::string& line : kept) out += html_escape(line) + "\n";
  return {out, total};
}

// InputError unless `run_dir` is a folder holding run.json or metrics.jsonl.
void check_run_folder(const std::string& run_dir) {
  if (run_dir.empty()) throw InputError("report: expected a run folder, got an empty path");
  std::error_code ec;
  const fs::file_status status = fs::status(run_dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw InputError(fmt::format("{}: cannot be read: {}", run_dir, ec.message()));
  if (!fs::exists(status)) throw InputError(fmt::format("{}: no such folder: expected a run folder", run_dir));
  if (!fs::is_directory(status)) throw InputError(fmt::format("{}: not a folder: expected a run folder", run_dir));
  if (!fs::exists(fs::path(run_dir) / run_files::kRunState, ec) && !fs::exists(fs::path(run_dir) / run_files::kMetrics, ec))
    throw InputError(fmt::format("{}: not a run folder: expected {} or {} in it", run_dir, run_files::kRunState,
                                 run_files::kMetrics));
}

}  // namespace

std::string run_report_html(const std::string& run_dir) {
  const fs::path dir(run_dir);
  const fs::path metrics = dir / run_files::kMetrics;
  check_run_folder(run_dir);
  // A damaged folder still gets its report: what cannot be read is said in the summary.
  ReportNotes notes;
  std::optional<RunState> state;
  try {
    state = read_run_state(run_dir);
  } catch (const std::runtime_error& e) {
    notes.unreadable_state = e.what();
  }
  // run.lock's flock is of this host (and a folder from before run.lock has none): only a lock file
  // that no process here holds tells a job that ended without a word.
  notes.abandoned = state && state->status == "running" && fs::exists(dir / run_files::kLock) &&
                    !run_folder_holder(run_dir);
  const std::optional<ResultRecord> result = read_result(run_dir);
  const LayoutDescription layout = LayoutDescription::of_run(state ? state->layout : "");
  const std::string unit = layout.curve_unit();
  const std::string title = html_escape(fs::absolute(dir).lexically_normal().filename().string());
  const std::string history =
      script_safe(run_history_json(metrics.string(), state ? state->objective : "", &notes.unreadable));
  const auto [events, total] = events_tail(dir / run_files::kEvents);
  const std::string shown = std::to_string(std::min(total, kEventsShown)), all = std::to_string(total);
  const std::string table = summary(state, result, notes), pictures = images(dir, layout);
  return fill_template(report_page_template(),
                       {{"TITLE", title}, {"PAGE_CSS", page_css()}, {"SUMMARY", table}, {"CURVES_HTML", curves_html()},
                        {"IMAGES", pictures}, {"EVENTS_SHOWN", shown}, {"EVENTS_TOTAL", all}, {"EVENTS", events},
                        {"CHART_JS", chart_js()}, {"CURVES_JS", curves_js()}, {"HISTORY_JSON", history},
                        {"UNIT", unit}});
}

std::string write_run_report(const std::string& run_dir) {
  const std::string path = (fs::path(run_dir) / run_files::kReport).string();
  const std::string html = run_report_html(run_dir);
  try {
    write_file_atomic(path, html, false);
  } catch (const DiskFull&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw InputError(fmt::format("{}: cannot write the report: {}", run_dir, e.what()));
  }
  return path;
}

}  // namespace cellgan
