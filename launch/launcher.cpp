// The launcher's loop (see launcher.h).
#include "launch/launcher.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "launch/attempt_verdict.h"
#include "launch/child_process.h"
#include "launch/process_session.h"
#include "launch/progress_watch.h"
#include "common/error.h"
#include "common/image_files.h"
#include "common/process_stats.h"
#include "common/run_files.h"
#include "common/run_state.h"
#include "common/run_status.h"

namespace cellgan::launch {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::milliseconds kPoll{200};
constexpr std::chrono::milliseconds kTermGrace{5000};
// Once the master has written its exit code, the run is over: mpirun has
// this long to exit after its last rank has, and a rank this long to
// finalize (MPI_Finalize gives up after 10 s: train_command.cpp). A stopped
// or hung mpirun is then ended instead of waiting for the stall deadline.
constexpr std::chrono::milliseconds kStarterGrace{3000};
constexpr std::chrono::milliseconds kFinalizeAllowance{20000};

// A folder of the launcher's own for the attempts' exit files.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/cellgan-launch.XXXXXX", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error(pattern + ": cannot create a scratch folder");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::optional<int> read_exit_file(const std::string& path) {
  std::ifstream in(path);
  int code = 0;
  if (in >> code) return code;
  return std::nullopt;
}

// The notes events.log does not hold yet.
std::vector<std::string> undelivered(const std::vector<std::string>& notes, const std::string& run_dir) {
  const std::string events = read_file((fs::path(run_dir) / run_files::kEvents).string()).value_or("");
  std::vector<std::string> left;
  for (const std::string& note : notes)
    if (events.find(note) == std::string::npos) left.push_back(note);
  return left;
}

// How the job ended, with its exit code said once (some causes say it).
std::string ending_text(const Verdict& verdict) {
  const std::string code = fmt::format("(exit {})", verdict.exit_code);
  return verdict.cause.find(code) != std::string::npos ? verdict.cause : verdict.cause + " " + code;
}

// After the last attempt of a job that wrote the run folder: events.log
// gets the launcher's ending, and a run.json the job left "running" (its
// master killed, or ended by the launcher) gets the launcher's verdict, so
// the folder tells how it ended. A folder the job never wrote (its master
// refused it, or the job ended before it started) is not the launcher's
// to write either.
void record_ending(const std::string& run_dir, const Verdict& verdict) {
  const fs::path events = fs::path(run_dir) / run_files::kEvents;
  if (fs::exists(events)) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &local);
    std::ofstream(events, std::ios::app) << stamp << " launch: ended: " << ending_text(verdict) << "\n";
  }
  try {
    std::optional<RunState> state = read_run_state(run_dir);
    if (!state || state->status != "running") return;
    state->status = status_word(status_of(verdict.exit_code));
    state->exit_code = verdict.exit_code;
    state->message = "cellgan launch: " + verdict.cause;
    try {
      write_run_state(run_dir, *state);
    } catch (const DiskFull&) {
      write_run_state_in_place(run_dir, *state);  // the space run.json holds already
    }
  } catch (const std::exception&) {
    // An unreadable run.json stays as it is; the launcher's line says the rest.
  }
}

// Whether the job should have exited by `now`: the master's exit code is
// written (at `ended`), and under mpirun no rank has been left for
// kStarterGrace, or (any starter) kFinalizeAllowance has passed.
class EndWatch {
 public:
  using Clock = std::chrono::steady_clock;
  EndWatch(std::string exit_file, bool ranks_visible) : exit_file_(std::move(exit_file)), ranks_visible_(ranks_visible) {}

  bool overdue(pid_t starter, Clock::time_point now) {
    if (!ended_) {
      if (!read_exit_file(exit_file_)) return false;
      ended_ = now;
    }
    if (now - *ended_ >= kFinalizeAllowance) return true;
    if (!ranks_visible_) return false;
    const std::vector<pid_t> members = session_members(starter);
    const bool ranks_left = std::any_of(members.begin(), members.end(), [starter](pid_t p) { return p != starter; });
    if (ranks_left) {
      ranks_gone_.reset();
      return false;
    }
    if (!ranks_gone_) ranks_gone_ = now;
    return now - *ranks_gone_ >= kStarterGrace;
  }

 private:
  std::string exit_file_;
  bool ranks_visible_;  // mpirun's ranks are in its session; srun's are on the nodes
  std::optional<Clock::time_point> ended_, ranks_gone_;
};

struct Watched {
  int status = 0;
  std::string stall;
  bool stop_requested = false;
  bool before_start = false;  // the stop came before the run wrote anything in this attempt
};

// Runs one attempt to its end.
Watched watch(ChildProcess& child, const LaunchSetup& setup, const std::string& exit_file,
              const std::atomic<int>& interrupts, const std::function<void(const std::string&)>& say) {
  Watched w;
  ProgressWatch progress(setup.stall_floor, ProgressWatch::Clock::now());
  EndWatch end_watch(exit_file, setup.starter == Starter::kMpirun);
  const std::uint64_t first_mark = progress_mark(setup.run_dir);
  bool stop_sent = false, ended = false;
  for (;;) {
    if (const std::optional<int> status = child.wait_for(kPoll)) {
      w.status = *status;
      break;
    }
    const int asked = interrupts.load();
    // Until the run has written something in this attempt, its ranks may
    // still be loading (a SIGUSR1 would end them) and nothing can be lost:
    // a stop then ends the job at once.
    const bool started = progress_mark(setup.run_dir) != first_mark;
    if (asked >= 1 && !stop_sent && !started && !ended) {
      stop_sent = w.stop_requested = w.before_start = ended = true;
      say("stopping: the run has not started yet, nothing to lose: ending it");
      end_session(child.pid(), std::chrono::milliseconds(2000));
    }
    if (asked >= 1 && !stop_sent) {
      stop_sent = w.stop_requested = true;
      say("stopping: the run checkpoints at its next generation and stops (interrupt again to end it at once)");
      child.signal(SIGUSR1);
    }
    if (asked >= 2 && !ended) {
      ended = true;
      say("ending the job now");
      end_session(child.pid(), std::chrono::milliseconds(1000));
    }
    const auto now = ProgressWatch::Clock::now();
    if (!ended && end_watch.overdue(child.pid(), now)) {
      say("the run has ended (its exit code is written) but mpirun/srun has not exited: ending it");
      ended = true;
      end_session(child.pid(), kTermGrace);
    }
    progress.observe(progress_mark(setup.run_dir), now);
    if (!ended && progress.stalled(now)) {
      w.stall = fmt::format("no progress for {:.0f} s (the deadline: nothing new in metrics.jsonl, events.log or "
                            "run.json for {:.0f} s)",
                            progress.silent_for(now).count() / 1000.0, progress.deadline().count() / 1000.0);
      say(fmt::format("stalled: {}; ending the job", w.stall));
      ended = true;
      end_session(child.pid(), kTermGrace);
    }
  }
  // mpirun has ended: any rank left behind (stopped, hung in MPI_Finalize)
  // goes with it.
  if (const std::size_t left = session_members(child.pid()).size(); left > 0) {
    say(fmt::format("ending {} process{} the job left behind", left, left == 1 ? "" : "es"));
    end_session(child.pid(), std::chrono::milliseconds(2000));
  }
  return w;
}

}  // namespace

int run_launch(const LaunchSetup& setup, const std::atomic<int>& interrupts,
               const std::function<void(const std::string&)>& say) {
  ScratchDir scratch;
  const std::uint64_t untouched = progress_mark(setup.run_dir);
  std::vector<std::string> notes;
  Verdict verdict;
  for (int attempt = 0;; ++attempt) {
    const std::string exit_file = fmt::format("{}/exit-{}", scratch.path(), attempt);
    std::vector<std::string> env = job_environment(setup.job);
    env.push_back("CELLGAN_EXIT_FILE=" + exit_file);
    env.push_back(fmt::format("CELLGAN_LAUNCHER_PID={}@{}", ::getpid(), host_name()));
    notes = undelivered(notes, setup.run_dir);
    env.push_back("CELLGAN_LAUNCH_NOTES=" + fmt::format("{}", fmt::join(notes, "\n")));
    const std::vector<std::string> argv = job_command(setup.job, setup.starter, setup.workers, attempt > 0);
    say(fmt::format("{} ({} worker{})", fmt::join(argv, " "), setup.workers, setup.workers == 1 ? "" : "s"));
    ChildProcess child(argv, ChildOptions{"", "", true, env});
    if (!child.started()) {
      say(fmt::format("error: cannot start the job: {}", child.start_error()));
      return kExitFailure;
    }
    const Watched w = watch(child, setup, exit_file, interrupts, say);
    AttemptEnd end;
    end.launcher_status = w.status;
    end.master_code = read_exit_file(exit_file);
    end.result_written = fs::exists(fs::path(setup.run_dir) / run_files::kResult);
    end.stall = w.stall;
    end.stop_requested = w.stop_requested;
    end.before_start = w.before_start;
    verdict = judge(end);
    if (!verdict.restart) break;
    if (attempt >= setup.max_restarts) {
      verdict.cause = fmt::format("giving up after {} restart{}: {}", setup.max_restarts,
                                  setup.max_restarts == 1 ? "" : "s", verdict.cause);
      break;
    }
    if (interrupts.load() > 0) break;
    const std::string what =
        fmt::format("restart {}/{} with --resume auto: {}", attempt + 1, setup.max_restarts, verdict.cause);
    say(what);
    notes.push_back("launch: " + what);
  }
  if (progress_mark(setup.run_dir) != untouched) record_ending(setup.run_dir, verdict);
  say(ending_text(verdict));
  return verdict.exit_code;
}

}  // namespace cellgan::launch
