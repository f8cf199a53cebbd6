// MpiSession: MPI's lifetime and the communicators of a cellgan job (see
// mpi_session.h).
//
// Thread-safety: construct and destroy on the main thread. group() and
// cartesian() are collective over their members and must be called by the
// thread that owns MPI; the communicators they return belong to it.
#include "common/comm/mpi_session.h"

#include <mpi.h>

#include <cstdio>
#include <memory>
#include <cstdlib>
#include <thread>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

#include "common/comm/exit_unless_done.h"
#include "common/comm/mpi_communicator.h"
#include "common/error.h"
#include "common/launch_rank.h"
#include "common/log.h"

namespace cellgan {
namespace {

// Far beyond a healthy start (MPI_Init takes about 1.2 s on 2 cores);
// docs/operations.md, "Launching", states it. kCreateLimit is
// exit_unless_done.h's.
constexpr std::chrono::seconds kInitLimit{30};

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "unknown";
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
  MPI_Comm comm = create_group_of(MPI_COMM_WORLD, world_ranks, tag);
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
  MPI_Comm group_comm = create_group_of(MPI_COMM_WORLD, worker_world_ranks, tag);
  const int dims[2] = {rows, cols};
  const int periods[2] = {1, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  int code = MPI_SUCCESS;
  {
    const ExitUnlessDone deadline("MPI_Cart_create", kCreateLimit);
    code = MPI_Cart_create(group_comm, 2, dims, periods, /*reorder=*/0, &cart);
  }
  if (code != MPI_SUCCESS || cart == MPI_COMM_NULL) MPI_Comm_free(&group_comm);
  check_mpi(code, "MPI_Cart_create");
  if (cart == MPI_COMM_NULL) throw std::runtime_error("MPI_Cart_create returned MPI_COMM_NULL");
  try {  // the group's own communicator carries nothing else: the Cartesian one's subgroups are made on it
    return std::make_unique<MpiCommunicator>(cart, /*owned=*/true, /*twin=*/group_comm);
  } catch (...) {
    MPI_Comm_free(&cart);
    MPI_Comm_free(&group_comm);
    throw;
  }
}

void MpiSession::abort(int code) const {
  log::error("aborting every rank of the job (exit code {})", code);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest.
}

}  // namespace cellgan
