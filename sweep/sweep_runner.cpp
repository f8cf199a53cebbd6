// Running the plan of a sweep (see sweep_runner.h).
#include "sweep/sweep_runner.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>

#include "common/run_files.h"
#include "common/run_state.h"
#include "common/run_status.h"
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

// The generations a run has written, as its run.json says (0 before it has
// one); std::nullopt when it cannot be read now (a full disk has the master
// rewrite it in place: run_state.h).
std::optional<std::int64_t> generations_written(const fs::path& folder) {
  try {
    const std::optional<RunState> state = read_run_state(folder.string());
    return state ? state->generation : 0;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The last line of a run's log, since its last attempt's command line
// ("# cellgan launch ..."), where cellgan says why it ended ("cellgan:
// error: ..." or "cellgan: failed: ..."), without the prefix and cut to 200
// characters; empty when there is none.
std::string why_it_failed(const std::string& log) {
  std::ifstream in(log);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) last.clear();  // an attempt begins
    for (const std::string prefix : {"cellgan: error: ", "cellgan: failed: "})
      if (const std::size_t at = line.find(prefix); at != std::string::npos) last = line.substr(at + prefix.size());
  }
  if (last.size() > 200) last = last.substr(0, 197) + "...";
  return last;
}

// The work of a run on one worker, for the estimate of the time left.
double weight(const PlannedRun& run) { return static_cast<double>(run.grid.cells()) / run.workers; }

// The first words of a run's lines: its place in the plan and what it varies.
std::string heading(const PlannedRun& run, std::size_t i, std::size_t n) {
  std::string head = fmt::format("sweep [{}/{}] grid {}, W {}, seed {}", i + 1, n, run.grid.label(), run.workers,
                                 run.seed);
  for (const auto& [key, value] : run.varied) head += fmt::format(", {} {}", key, value);
  return head;
}

// The sweep's pace so far, for the time its remaining runs will take.
struct Pace {
  double weight_left = 0.0, weight_done = 0.0, seconds_done = 0.0;
  std::string time_left() const {
    return weight_done > 0 ? fmt::format(", about {} left", duration(seconds_done / weight_done * weight_left)) : "";
  }
};

// The status line of the run in training: its generation and, once two have
// been seen in this session, the time left for it.
class RunProgress {
 public:
  using Clock = std::chrono::steady_clock;
  RunProgress(fs::path folder, std::int64_t generations, Clock::time_point started)
      : folder_(std::move(folder)), generations_(generations), first_at_(started) {}
  std::string line(const std::string& head, Clock::time_point now) {
    done_ = generations_written(folder_).value_or(done_);
    const std::int64_t done = done_;
    if (first_ < 0 && done > 0) {
      first_ = done;
      first_at_ = now;
    }
    std::string left;
    if (first_ >= 0 && done > first_) {
      const double per = std::chrono::duration<double>(now - first_at_).count() / static_cast<double>(done - first_);
      left = fmt::format(", about {} left for this run", duration(per * static_cast<double>(generations_ - done)));
    }
    return fmt::format("{}: generation {}/{}{}", head, done, generations_, left);
  }

 private:
  fs::path folder_;
  std::int64_t generations_;
  std::int64_t done_ = 0;  // the generations written when last read
  std::int64_t first_ = -1;  // generations done when this session's first one was seen
  Clock::time_point first_at_;
};

// Runs argv (its output to the run's log) until it exits, showing its status
// line each second and passing interrupts on: the first as SIGUSR1
// (checkpoint and stop), the next as SIGTERM. Returns its exit code, 127 when
// it could not start.
int train_run(const std::vector<std::string>& argv, const SweepSetup& setup, const PlannedRun& run,
              const std::string& head, std::chrono::steady_clock::time_point started,
              const std::atomic<int>& interrupts, const std::function<void(const std::string&)>& say,
              const std::function<void(const std::string&)>& status) {
  launch::ChildProcess child(argv, log_file(setup, run));
  if (!child.started()) {
    std::ofstream(log_file(setup, run), std::ios::app) << "could not start: " << child.start_error() << "\n";
    return 127;
  }
  int sent = 0;
  RunProgress progress(run_folder(setup, run), setup.generations, started);
  auto next_status = started;
  while (true) {
    if (const auto exit = child.wait_for(std::chrono::milliseconds(200))) return *exit;
    const auto now = std::chrono::steady_clock::now();
    if (status && now >= next_status && setup.generations > 0) {
      next_status = now + std::chrono::seconds(1);
      status(progress.line(head, now));
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
  Pace pace;  // weight_left: the runs still to run, by weight
  for (const PlannedRun& run : plan)
    if (!run.skip && !fs::exists(fs::path(run_folder(setup, run)) / run_files::kResult)) pace.weight_left += weight(run);

  for (std::size_t i = 0; i < n; ++i) {
    const PlannedRun& run = plan[i];
    const std::string head = heading(run, i, n);
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
    say(fmt::format("{}: {}{}", head, resuming ? "resuming" : "running", pace.time_left()));
    const std::vector<std::string> argv = run_command(setup, run);
    {
      std::ofstream log(log_file(setup, run), std::ios::app);
      log << "# " << fmt::format("{}", fmt::join(argv, " ")) << "\n";
    }
    const auto started = std::chrono::steady_clock::now();
    const int code = train_run(argv, setup, run, head, started, interrupts, say, status);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::string log = fs::relative(log_file(setup, run), setup.out).string();
    if (code == 0 && fs::exists(folder / run_files::kResult)) {
      ++out.finished;
      pace.weight_done += weight(run);
      pace.seconds_done += seconds;
      pace.weight_left -= weight(run);
      say(fmt::format("{}: finished in {}", head, duration(seconds)));
    } else if (interrupts.load() > 0 || status_of(code) == RunStatus::kStopped) {
      out.unfinished.push_back(run.name);
      say(fmt::format("{}: stopped after {} (exit {}): run the sweep again to resume it", head, duration(seconds),
                      code));
    } else {
      const std::string why = why_it_failed(log_file(setup, run));
      out.failed.push_back(fmt::format("{}: exit {}{} (see {})", run.name, code, why.empty() ? "" : ": " + why, log));
      pace.weight_left -= weight(run);
      say(fmt::format("{}: failed after {} with exit {} (see {})", head, duration(seconds), code,
                      (fs::path(setup.out) / log).string()));
    }
  }
  out.interrupted = interrupts.load() > 0;
  return out;
}

}  // namespace cellgan::sweep
