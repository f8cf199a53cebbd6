// MpiSession: MPI's lifetime and the communicators of a cellgan job (see
// mpi_session.h).
//
// Thread-safety: construct and destroy on the main thread. group() and
// cartesian() are collective over their members and must be called by the
// thread that owns MPI; the communicators they return belong to it.
#include "common/comm/mpi_session.h"

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <memory>
#include <cstdlib>
#include <thread>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

#include "common/comm/mpi_communicator.h"
#include "common/error.h"
#include "common/launch_rank.h"
#include "common/log.h"

namespace cellgan {
namespace {

// Far beyond a healthy start (MPI_Init takes about 1.2 s on 2 cores), and a
// healthy communicator creation (about 1 ms; it follows a handshake that has
// just shown every member alive). docs/operations.md, "Launching", states both.
constexpr std::chrono::seconds kInitLimit{30};
constexpr std::chrono::seconds kCreateLimit{10};

// A deadline for an MPI call that has none of its own (MPI_Init, and the
// collective creation of a communicator, which waits for every member, a
// lost one too — under mpirun --enable-recovery for ever). If the guard is
// still alive after `limit`, the process says which call (its last line,
// through the logger), reports exit 75 to the launcher (launch_rank.h) and
// exits with it: whatever was done is in the newest complete checkpoint,
// and `--resume auto` (or cellgan launch, by itself) goes on from there.
// It ends the process from its own detached thread with std::_Exit because
// nothing else can: the blocked MPI call cannot be interrupted, and
// returning or exit() would run destructors that wait on MPI too.
class ExitUnlessDone {
 public:
  ExitUnlessDone(std::string what, std::chrono::seconds limit) : state_(std::make_shared<State>()) {
    std::thread([state = state_, what = std::move(what), limit] {
      std::unique_lock<std::mutex> lock(state->mutex);
      if (state->changed.wait_for(lock, limit, [&] { return state->done; })) return;
      log::last_line(fmt::format("cellgan: stopped: {} has not returned after {} s (a rank lost?): run the same "
                                 "command again with --resume auto",
                                 what, limit.count()));
      report_exit_code(kExitRestart);
      std::_Exit(kExitRestart);
    }).detach();
  }
  ~ExitUnlessDone() {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->done = true;
    }
    state_->changed.notify_all();
  }
  ExitUnlessDone(const ExitUnlessDone&) = delete;
  ExitUnlessDone& operator=(const ExitUnlessDone&) = delete;

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    bool done = false;
  };
  std::shared_ptr<State> state_;
};


const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "unknown";
}

// Frees an MPI_Group on scope exit, so error paths leak nothing.
class GroupHandle {
 public:
  GroupHandle() = default;
  ~GroupHandle() {
    if (group_ != MPI_GROUP_NULL) MPI_Group_free(&group_);
  }
  GroupHandle(const GroupHandle&) = delete;
  GroupHandle& operator=(const GroupHandle&) = delete;
  MPI_Group* out() { return &group_; }
  MPI_Group get() const { return group_; }

 private:
  MPI_Group group_ = MPI_GROUP_NULL;
};

// The raw communicator over `world_ranks`; called by exactly those ranks.
MPI_Comm create_group_comm(const std::vector<int>& world_ranks, int tag, int world_rank, int world_size) {
  if (world_ranks.empty()) throw std::invalid_argument("create_group: no ranks given");
  bool member = false;
  for (std::size_t i = 0; i < world_ranks.size(); ++i) {
    const int r = world_ranks[i];
    if (r < 0 || r >= world_size) {
      throw std::invalid_argument(fmt::format("create_group: rank {} is not in WORLD (size {})", r, world_size));
    }
    if (i > 0 && r <= world_ranks[i - 1]) {
      throw std::invalid_argument("create_group: ranks must be strictly ascending");
    }
    member = member || r == world_rank;
  }
  if (!member) {
    throw std::invalid_argument(
        fmt::format("create_group: called by world rank {}, which is not a member", world_rank));
  }
  if (tag < 0) throw std::invalid_argument(fmt::format("create_group: tag {} is negative", tag));

  GroupHandle world_group;
  GroupHandle group;
  check_mpi(MPI_Comm_group(MPI_COMM_WORLD, world_group.out()), "MPI_Comm_group");
  check_mpi(MPI_Group_incl(world_group.get(), static_cast<int>(world_ranks.size()), world_ranks.data(),
                           group.out()),
            "MPI_Group_incl");
  MPI_Comm comm = MPI_COMM_NULL;
  {
    const ExitUnlessDone deadline(fmt::format("MPI_Comm_create_group (tag {})", tag), kCreateLimit);
    check_mpi(MPI_Comm_create_group(MPI_COMM_WORLD, group.get(), tag, &comm), "MPI_Comm_create_group");
  }
  if (comm == MPI_COMM_NULL) throw std::runtime_error("MPI_Comm_create_group returned MPI_COMM_NULL");
  return comm;
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized) throw std::logic_error("MpiSession: MPI is already initialised (one session per process)");

  // MPI_Init waits for every rank of the job, a lost one too: past the
  // limit this rank exits with kExitRestart (75), since nothing has been
  // done yet.
  int provided = MPI_THREAD_SINGLE;
  int init = MPI_SUCCESS;
  {
    const ExitUnlessDone deadline("MPI_Init", kInitLimit);
    init = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  }
  check_mpi(init, "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();  // The destructor will not run: this constructor throws.
    throw std::runtime_error(fmt::format("MPI_Init_thread provided {}; cellgan needs at least MPI_THREAD_SERIALIZED",
                                         thread_level_name(provided)));
  }
  // Errors on WORLD (and the communicators made from it) come back as codes
  // that check_mpi() turns into exceptions, instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &world_size_), "MPI_Comm_size");
  log::set_rank(world_rank_);
  log::debug("MPI started: {} ranks, thread level {}", world_size_, thread_level_name(provided));
}

MpiSession::~MpiSession() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  const int code = MPI_Finalize();
  if (code != MPI_SUCCESS) log::error("MPI_Finalize failed (code {})", code);
}

void MpiSession::finalize_within(std::chrono::milliseconds limit, int exit_code, std::function<void()> before_exit) {
  std::thread([limit, exit_code, before_exit] {
    std::this_thread::sleep_for(limit);
    log::warn("MPI_Finalize has not returned after {} ms (a lost peer?): exiting with {}", limit.count(), exit_code);
    if (before_exit) before_exit();
    std::fflush(nullptr);
    std::_Exit(exit_code);
  }).detach();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  const int code = MPI_Finalize();
  if (code != MPI_SUCCESS) log::error("MPI_Finalize failed (code {})", code);
}

bool MpiSession::survives_rank_loss() const {
  const char* recovery = std::getenv("OMPI_MCA_orte_enable_recovery");
  return recovery != nullptr && std::string(recovery) == "1";
}

std::unique_ptr<Communicator> MpiSession::world() {
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, /*owned=*/false);
}

std::unique_ptr<Communicator> MpiSession::group(const std::vector<int>& world_ranks, int tag) {
  MPI_Comm comm = create_group_comm(world_ranks, tag, world_rank_, world_size_);
  try {
    return std::make_unique<MpiCommunicator>(comm, /*owned=*/true);
  } catch (...) {
    MPI_Comm_free(&comm);
    throw;
  }
}

std::unique_ptr<Communicator> MpiSession::cartesian(const std::vector<int>& worker_world_ranks, int rows, int cols,
                                                    int tag) {
  if (rows <= 0 || cols <= 0 || static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) !=
                                    worker_world_ranks.size()) {
    throw std::invalid_argument(fmt::format("create_cartesian: a {}x{} grid does not fit {} worker ranks", rows,
                                            cols, worker_world_ranks.size()));
  }
  MPI_Comm group_comm = create_group_comm(worker_world_ranks, tag, world_rank_, world_size_);
  const int dims[2] = {rows, cols};
  const int periods[2] = {1, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  int code = MPI_SUCCESS;
  {
    const ExitUnlessDone deadline("MPI_Cart_create", kCreateLimit);
    code = MPI_Cart_create(group_comm, 2, dims, periods, /*reorder=*/0, &cart);
  }
  MPI_Comm_free(&group_comm);
  check_mpi(code, "MPI_Cart_create");
  if (cart == MPI_COMM_NULL) throw std::runtime_error("MPI_Cart_create returned MPI_COMM_NULL");
  try {
    return std::make_unique<MpiCommunicator>(cart, /*owned=*/true);
  } catch (...) {
    MPI_Comm_free(&cart);
    throw;
  }
}

void MpiSession::abort(int code) const {
  log::error("aborting every rank of the job (exit code {})", code);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest.
}

}  // namespace cellgan
