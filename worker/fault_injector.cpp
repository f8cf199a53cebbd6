// Injecting the planned faults on a worker rank (see fault_injector.h).
#include "worker/fault_injector.h"

#include <fstream>

#include <fmt/format.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "common/log.h"

extern char** environ;

namespace cellgan {

void stop_process_for(std::int64_t seconds) {
  const std::string script = fmt::format("sleep {}; kill -CONT {} 2>/dev/null", seconds, ::getpid());
  const char* argv[] = {"sh", "-c", script.c_str(), nullptr};
  // The waker keeps none of the rank's output pipes open: mpirun waits for
  // them, so a rank killed while stopped would hold the job for `seconds`.
  posix_spawn_file_actions_t files;
  ::posix_spawn_file_actions_init(&files);
  for (int fd : {0, 1, 2}) ::posix_spawn_file_actions_addopen(&files, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  pid_t child = 0;
  const int rc = ::posix_spawn(&child, "/bin/sh", &files, nullptr, const_cast<char* const*>(argv), environ);
  ::posix_spawn_file_actions_destroy(&files);
  if (rc != 0) throw std::runtime_error(fmt::format("fault stall: cannot start /bin/sh: {}", std::strerror(rc)));
  ::raise(SIGSTOP);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

std::vector<std::string> FaultInjector::at_generation_start(std::int64_t gen,
                                                            const std::function<void()>& go_silent) const {
  std::vector<std::string> events;
  for (const Fault& f : plan_.at_generation_start(rank_, gen)) {
    const std::string what = fmt::format("fault {}: {}", to_string(f.kind), describe(f));
    log::warn("injecting {}", what);
    switch (f.kind) {
      case FaultKind::kKill:
        ::raise(SIGKILL);
        break;
      case FaultKind::kStall: {
        const auto stopped = std::chrono::steady_clock::now();
        stop_process_for(f.seconds);
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
        log::warn("fault stall: worker rank {} continues after {:.1f} s", rank_, took);
        events.push_back(fmt::format("{} (stopped {:.1f} s)", what, took));
        break;
      }
      case FaultKind::kDropHeartbeats:
        go_silent();
        events.push_back(what);  // never reaches the master: it is silent now
        break;
      default:
        throw std::logic_error("FaultInjector: not a fault of the generation's start");
    }
  }
  if (plan_.delay_starts(rank_, gen)) {
    const std::string what =
        fmt::format("fault delay: worker rank {} slowed by {} ms per batch from generation {}", rank_,
                    plan_.batch_delay_ms(rank_, gen), gen);
    log::warn("injecting {}", what);
    events.push_back(what);
  }
  return events;
}

CellFaults FaultInjector::for_cell(int cell, std::int64_t gen) const {
  CellFaults faults;
  faults.poison_generators = plan_.poisons(cell, gen);
  faults.batch_delay = std::chrono::milliseconds(plan_.batch_delay_ms(rank_, gen));
  return faults;
}

std::vector<std::string> FaultInjector::corrupt_checkpoint(std::int64_t gen, const std::string& folder,
                                                          const std::vector<CheckpointFile>& files) const {
  std::vector<std::string> events;
  for (const CheckpointFile& f : files) {
    if (!plan_.corrupts_checkpoint(gen, f.cell) || f.bytes == 0) continue;
    const std::string path = folder + "/" + f.name;
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    const auto at = static_cast<std::streamoff>(f.bytes / 2);
    char byte = 0;
    file.seekg(at);
    file.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x5a);
    file.seekp(at);
    file.write(&byte, 1);
    if (!file) continue;
    events.push_back(fmt::format("fault corrupt-checkpoint: flipped a byte of {} (cell {}, generation {})", path,
                                 f.cell, gen));
  }
  return events;
}

}  // namespace cellgan
