// The MPI implementation of Communicator (see mpi_communicator.h).
//
// Thread-safety: an MpiCommunicator belongs to one thread; check_mpi() and
// wait_polling() may be called from any thread that may call MPI.
#include "common/comm/mpi_communicator.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/core.h>

#include "common/comm/exit_unless_done.h"
#include "common/log.h"

namespace cellgan {
namespace {

constexpr auto kPollSleep = std::chrono::microseconds(200);

int to_mpi_source(int source) { return source == kAnySource ? MPI_ANY_SOURCE : source; }
int to_mpi_tag(int tag) { return tag == kAnyTag ? MPI_ANY_TAG : tag; }

int checked_count(std::size_t bytes, const char* what) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw std::invalid_argument(
        fmt::format("{}: {} bytes is more than one MPI message can carry ({})", what, bytes, INT_MAX));
  }
  return static_cast<int>(bytes);
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

// Throws std::invalid_argument unless `ranks` are strictly ascending ranks
// of 0..size-1 with `me` among them, and `tag` is not negative.
void check_group(const std::vector<int>& ranks, int tag, int me, int size) {
  if (ranks.empty()) throw std::invalid_argument("create_group: no ranks given");
  bool member = false;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= size)
      throw std::invalid_argument(fmt::format("create_group: rank {} is not in the parent (size {})", r, size));
    if (i > 0 && r <= ranks[i - 1]) throw std::invalid_argument("create_group: ranks must be strictly ascending");
    member = member || r == me;
  }
  if (!member)
    throw std::invalid_argument(fmt::format("create_group: called by rank {}, which is not a member", me));
  if (tag < 0) throw std::invalid_argument(fmt::format("create_group: tag {} is negative", tag));
}

}  // namespace

MPI_Comm create_group_of(MPI_Comm parent, const std::vector<int>& ranks, int tag) {
  int me = 0;
  int size = 0;
  check_mpi(MPI_Comm_rank(parent, &me), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(parent, &size), "MPI_Comm_size");
  check_group(ranks, tag, me, size);
  GroupHandle parent_group;
  GroupHandle group;
  check_mpi(MPI_Comm_group(parent, parent_group.out()), "MPI_Comm_group");
  check_mpi(MPI_Group_incl(parent_group.get(), static_cast<int>(ranks.size()), ranks.data(), group.out()),
            "MPI_Group_incl");
  MPI_Comm comm = MPI_COMM_NULL;
  {
    const ExitUnlessDone deadline(fmt::format("MPI_Comm_create_group (tag {})", tag), kCreateLimit);
    check_mpi(MPI_Comm_create_group(parent, group.get(), tag, &comm), "MPI_Comm_create_group");
  }
  if (comm == MPI_COMM_NULL) throw std::runtime_error("MPI_Comm_create_group returned MPI_COMM_NULL");
  return comm;
}

void check_mpi(int code, const char* function) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  throw std::runtime_error(
      fmt::format("{} failed: {} (code {})", function, std::string(text, length), code));
}

void wait_polling(MPI_Request& request, const char* function) {
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), function);
    if (done) return;
    std::this_thread::sleep_for(kPollSleep);
  }
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, bool owned, MPI_Comm twin)
    : comm_(comm), owned_(owned && comm != MPI_COMM_WORLD), twin_(twin) {
  if (comm == MPI_COMM_NULL) throw std::invalid_argument("MpiCommunicator: MPI_COMM_NULL");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // Too late to touch MPI; nothing left to free.
  try {
    if (pending_sends() > 0) {
      log::warn("communicator destroyed with {} send(s) in flight; releasing them", requests_.size());
      for (auto& request : requests_) MPI_Request_free(&request);
      // MPI may still read these buffers: leak them on purpose.
      static_cast<void>(new std::vector<Bytes>(std::move(payloads_)));
    }
    if (!arriving_.empty()) {
      log::warn("communicator destroyed with {} message(s) still arriving; releasing them", arriving_.size());
      for (Arriving& a : arriving_)
        if (a.request != MPI_REQUEST_NULL) MPI_Request_free(&a.request);
      // MPI may still write these buffers: leak them on purpose.
      static_cast<void>(new std::vector<Arriving>(std::move(arriving_)));
    }
  } catch (const std::exception& e) {
    log::error("communicator destructor: {}", e.what());
  }
  if (owned_) {
    const int code = MPI_Comm_free(&comm_);
    if (code != MPI_SUCCESS) log::error("MPI_Comm_free failed (code {})", code);
  }
  if (twin_ != MPI_COMM_NULL) {
    const int code = MPI_Comm_free(&twin_);
    if (code != MPI_SUCCESS) log::error("MPI_Comm_free failed (code {})", code);
  }
}

void MpiCommunicator::send(int dest, int tag, Bytes payload) {
  if (dest < 0 || dest >= size_) {
    throw std::invalid_argument(fmt::format("send: destination {} is not a rank of 0..{}", dest, size_ - 1));
  }
  if (tag < 0) throw std::invalid_argument(fmt::format("send: tag {} is negative", tag));
  const int count = checked_count(payload.size(), "send");
  payloads_.push_back(std::move(payload));
  MPI_Request request = MPI_REQUEST_NULL;
  const int code = MPI_Isend(payloads_.back().data(), count, MPI_BYTE, dest, tag, comm_, &request);
  if (code != MPI_SUCCESS) payloads_.pop_back();
  check_mpi(code, "MPI_Isend");
  requests_.push_back(request);
}

std::size_t MpiCommunicator::pending_sends() {
  if (requests_.empty()) return 0;
  int completed = 0;
  std::vector<int> indices(requests_.size());
  check_mpi(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &completed, indices.data(),
                         MPI_STATUSES_IGNORE),
            "MPI_Testsome");
  if (completed > 0 && completed != MPI_UNDEFINED) {
    // Completed requests are now MPI_REQUEST_NULL; keep the others in order.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) continue;
      requests_[kept] = requests_[i];
      if (kept != i) payloads_[kept] = std::move(payloads_[i]);
      ++kept;
    }
    requests_.resize(kept);
    payloads_.resize(kept);
  }
  return requests_.size();
}

std::optional<Message> MpiCommunicator::try_receive(int source, int tag) {
  if (source != kAnySource && (source < 0 || source >= size_)) {
    throw std::invalid_argument(fmt::format("try_receive: source {} is not a rank of 0..{}", source, size_ - 1));
  }
  const auto matches = [&](const Message& m) {
    return (source == kAnySource || m.source == source) && (tag == kAnyTag || m.tag == tag);
  };
  // The sources whose oldest matching message is still arriving: their later
  // messages wait for it, the other sources' do not.
  std::vector<int> held;
  const auto is_held = [&](int from) { return std::find(held.begin(), held.end(), from) != held.end(); };
  // Messages matched earlier come first, in the order matched.
  for (auto it = arriving_.begin(); it != arriving_.end(); ++it) {
    if (!matches(it->message) || is_held(it->message.source)) continue;
    int done = 0;
    check_mpi(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test (MPI_Imrecv)");
    if (!done) {
      held.push_back(it->message.source);
      continue;
    }
    Message message = std::move(it->message);
    arriving_.erase(it);
    return message;
  }
  for (;;) {
    int found = 0;
    MPI_Message handle = MPI_MESSAGE_NULL;
    MPI_Status status;
    check_mpi(MPI_Improbe(to_mpi_source(source), to_mpi_tag(tag), comm_, &found, &handle, &status), "MPI_Improbe");
    if (!found) return std::nullopt;
    int count = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    Arriving a{MPI_REQUEST_NULL, Message{}};
    a.message.source = status.MPI_SOURCE;
    a.message.tag = status.MPI_TAG;
    a.message.payload.resize(static_cast<std::size_t>(count));
    check_mpi(MPI_Imrecv(a.message.payload.data(), count, MPI_BYTE, &handle, &a.request), "MPI_Imrecv");
    int done = 0;
    check_mpi(MPI_Test(&a.request, &done, MPI_STATUS_IGNORE), "MPI_Test (MPI_Imrecv)");
    if (done && !is_held(a.message.source)) return std::move(a.message);
    if (!done) held.push_back(a.message.source);
    arriving_.push_back(std::move(a));  // after what its source sent earlier
  }
}

std::vector<Bytes> MpiCommunicator::gather(int root, const Bytes& payload) {
  if (root < 0 || root >= size_) {
    throw std::invalid_argument(fmt::format("gather: root {} is not a rank of 0..{}", root, size_ - 1));
  }
  const bool is_root = rank_ == root;
  const int my_count = checked_count(payload.size(), "gather");

  std::vector<int> counts(is_root ? size_ : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Igather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm_, &request),
            "MPI_Igather");
  wait_polling(request, "MPI_Igather");

  std::vector<int> displacements(counts.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displacements[i] = checked_count(total, "gather (total at root)");
    total += static_cast<std::size_t>(counts[i]);
  }
  checked_count(total, "gather (total at root)");
  Bytes all(total);

  check_mpi(MPI_Igatherv(payload.data(), my_count, MPI_BYTE, all.data(), counts.data(), displacements.data(),
                         MPI_BYTE, root, comm_, &request),
            "MPI_Igatherv");
  wait_polling(request, "MPI_Igatherv");

  std::vector<Bytes> result;
  if (!is_root) return result;
  result.reserve(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto begin = all.begin() + displacements[i];
    result.emplace_back(begin, begin + counts[i]);
  }
  return result;
}

void MpiCommunicator::barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
  wait_polling(request, "MPI_Ibarrier");
}

namespace {

class MpiPendingSum final : public Communicator::PendingSum {
 public:
  explicit MpiPendingSum(MPI_Request request) : request_(request) {}
  bool done() override {
    if (request_ == MPI_REQUEST_NULL) return true;
    int done = 0;
    check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Iallreduce");
    return done != 0;
  }

 private:
  MPI_Request request_;
};

}  // namespace

std::unique_ptr<Communicator::PendingSum> MpiCommunicator::start_allreduce_sum(std::vector<float>& values) {
  const int count = checked_count(values.size(), "allreduce_sum");
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, values.data(), count, MPI_FLOAT, MPI_SUM, comm_, &request),
            "MPI_Iallreduce");
  return std::make_unique<MpiPendingSum>(request);
}

std::unique_ptr<Communicator> MpiCommunicator::subgroup(const std::vector<int>& ranks, int tag) {
  if (twin_ == MPI_COMM_NULL) throw std::logic_error("subgroup: this communicator has no twin to make subgroups on");
  MPI_Comm comm = create_group_of(twin_, ranks, tag);
  try {
    return std::make_unique<MpiCommunicator>(comm, /*owned=*/true);
  } catch (...) {
    MPI_Comm_free(&comm);
    throw;
  }
}

}  // namespace cellgan
