// Running the plan of a sweep (see sweep_runner.h).
#include "sweep/sweep_runner.h"

#include "common/run_files.h"
#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "launch/child_process.h"

namespace cellgan::sweep {

namespace fs = std::filesystem;

namespace {

// "42s", "3m07s", "1h05m".
std::string duration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
}

// The complete generations in a run's metrics.jsonl (a line per cell per
// generation), read on from where the last call stopped: the file only
// grows, except when a resumed run rewrites it, which starts the count over.
class GenerationCounter {
 public:
  GenerationCounter(fs::path metrics, int cells) : path_(std::move(metrics)), cells_(cells) {}
  std::int64_t generations() {
    std::error_code ec;
    const auto size = fs::file_size(path_, ec);
    if (ec) return 0;
    if (size < offset_) offset_ = lines_ = 0;
    std::ifstream in(path_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset_));
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      const auto n = in.gcount();
      lines_ += std::count(buffer, buffer + n, '\n');
      offset_ += static_cast<std::uintmax_t>(n);
    }
    return lines_ / cells_;
  }

 private:
  fs::path path_;
  int cells_;
  std::uintmax_t offset_ = 0;
  std::int64_t lines_ = 0;
};

// The work of a run on one worker, for the estimate of the time left.
double weight(const PlannedRun& run) { return static_cast<double>(run.grid.cells()) / run.workers; }

}  // namespace

std::string run_folder(const SweepSetup& setup, const PlannedRun& run) {
  return (fs::path(setup.out) / "runs" / run.name).string();
}

std::string log_file(const SweepSetup& setup, const PlannedRun& run) {
  return (fs::path(setup.out) / "logs" / (run.name + ".log")).string();
}

std::vector<std::string> run_command(const SweepSetup& setup, const PlannedRun& run) {
  std::vector<std::string> argv;
  if (setup.launcher.empty()) {
    argv = {setup.cellgan, "launch", "-w", std::to_string(run.workers), setup.config, "--resume", "auto"};
  } else {
    argv = setup.launcher;
    argv.insert(argv.end(), {"-np", std::to_string(run.workers + 1), setup.cellgan, "train", setup.config, "--resume",
                             "auto"});
  }
  std::vector<std::string> settings = setup.settings;
  for (std::string& s : run_settings(run, run_folder(setup, run))) settings.push_back(std::move(s));
  for (const std::string& s : settings) argv.insert(argv.end(), {"--set", s});
  return argv;
}

SweepOutcome run_sweep(const std::vector<PlannedRun>& plan, const SweepSetup& setup,
                       const std::atomic<int>& interrupts, const std::function<void(const std::string&)>& say,
                       const std::function<void(const std::string&)>& status) {
  SweepOutcome out;
  fs::create_directories(fs::path(setup.out) / "runs");
  fs::create_directories(fs::path(setup.out) / "logs");
  const std::size_t n = plan.size();
  // The runs still to run, by weight, for the time left.
  double weight_left = 0.0;
  for (const PlannedRun& run : plan)
    if (!run.skip && !fs::exists(fs::path(run_folder(setup, run)) / run_files::kResult)) weight_left += weight(run);
  double weight_done = 0.0, seconds_done = 0.0;

  for (std::size_t i = 0; i < n; ++i) {
    const PlannedRun& run = plan[i];
    std::string head = fmt::format("sweep [{}/{}] grid {}, W {}, seed {}", i + 1, n, run.grid.label(), run.workers,
                                   run.seed);
    for (const auto& [key, value] : run.varied) head += fmt::format(", {} {}", key, value);
    const fs::path folder = run_folder(setup, run);
    if (run.skip) {
      out.skipped.push_back(fmt::format("{}: {}", run.name, *run.skip));
      say(fmt::format("{}: skipped: {}", head, *run.skip));
      continue;
    }
    if (fs::exists(folder / run_files::kResult)) {
      ++out.finished;
      ++out.kept;
      say(fmt::format("{}: finished before, kept ({})", head, folder.string()));
      continue;
    }
    if (interrupts.load() > 0) {
      out.unfinished.push_back(run.name);
      continue;
    }
    const bool resuming = fs::exists(folder / run_files::kConfig);
    const std::string eta =
        weight_done > 0 ? fmt::format(", about {} left", duration(seconds_done / weight_done * weight_left)) : "";
    say(fmt::format("{}: {}{}", head, resuming ? "resuming" : "running", eta));
    const std::vector<std::string> argv = run_command(setup, run);
    {
      std::ofstream log(log_file(setup, run), std::ios::app);
      log << "# " << fmt::format("{}", fmt::join(argv, " ")) << "\n";
    }
    const auto started = std::chrono::steady_clock::now();
    launch::ChildProcess child(argv, log_file(setup, run));
    int code = 0;
    if (!child.started()) {
      code = 127;
      std::ofstream(log_file(setup, run), std::ios::app) << "could not start: " << child.start_error() << "\n";
    } else {
      int sent = 0;
      GenerationCounter counter(folder / run_files::kMetrics, run.grid.cells());
      std::int64_t first = -1;  // generations done when this session's first one was seen
      auto first_at = started;
      auto next_status = started;
      while (true) {
        if (const auto exit = child.wait_for(std::chrono::milliseconds(200))) {
          code = *exit;
          break;
        }
        const auto now = std::chrono::steady_clock::now();
        if (status && now >= next_status && setup.generations > 0) {
          next_status = now + std::chrono::seconds(1);
          const std::int64_t done = counter.generations();
          if (first < 0 && done > 0) {
            first = done;
            first_at = now;
          }
          std::string left;
          if (first >= 0 && done > first) {
            const double per = std::chrono::duration<double>(now - first_at).count() / static_cast<double>(done - first);
            left = fmt::format(", about {} left for this run", duration(per * static_cast<double>(setup.generations - done)));
          }
          status(fmt::format("{}: generation {}/{}{}", head, done, setup.generations, left));
        }
        const int asked = interrupts.load();
        if (asked > sent) {
          sent = asked;
          child.signal(asked == 1 ? SIGUSR1 : SIGTERM);
          say(fmt::format("{}: {}", head, asked == 1 ? "interrupted: checkpointing and stopping (interrupt again "
                                                       "to end it at once)"
                                                     : "interrupted again: ending it"));
        }
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::string log = fs::relative(log_file(setup, run), setup.out).string();
    if (code == 0 && fs::exists(folder / run_files::kResult)) {
      ++out.finished;
      weight_done += weight(run);
      seconds_done += seconds;
      weight_left -= weight(run);
      say(fmt::format("{}: finished in {}", head, duration(seconds)));
    } else if (interrupts.load() > 0 || code == 75) {
      out.unfinished.push_back(run.name);
      say(fmt::format("{}: stopped after {} (exit {}): run the sweep again to resume it", head, duration(seconds),
                      code));
    } else {
      out.failed.push_back(fmt::format("{}: exit {} (see {})", run.name, code, log));
      weight_left -= weight(run);
      say(fmt::format("{}: failed after {} with exit {} (see {})", head, duration(seconds), code,
                      (fs::path(setup.out) / log).string()));
    }
  }
  out.interrupted = interrupts.load() > 0;
  return out;
}

}  // namespace cellgan::sweep
