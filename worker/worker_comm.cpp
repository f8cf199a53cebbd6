// The worker's communication thread (see worker_comm.h).
#include "worker/worker_comm.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "common/idle_backoff.h"
#include "common/log.h"

namespace cellgan {

namespace {
constexpr int kMaster = 0;
}  // namespace

WorkerComm::WorkerComm(std::unique_ptr<Communicator> world, std::unique_ptr<Communicator> global,
                       std::unique_ptr<Communicator> local, HaloPlan plan,
                       std::chrono::milliseconds heartbeat_interval)
    : world_(std::move(world)),
      global_(std::move(global)),
      local_(std::move(local)),
      plan_(std::move(plan)),
      heartbeat_interval_(heartbeat_interval) {}

void WorkerComm::publish_centres(std::int64_t generation, std::map<int, std::pair<Bytes, Bytes>> centres) {
  // Encoded before taking the lock, so the communication thread keeps
  // receiving while megabytes are copied.
  std::deque<Outgoing> queued;
  for (const auto& out : plan_.sends) {
    auto& [g_bytes, d_bytes] = centres.at(out.cell);
    Bytes payload = encode(HaloMessage{generation, out.cell, std::move(g_bytes), std::move(d_bytes)});
    // A copy for each destination but the last, which takes the encoding.
    for (std::size_t i = 0; i + 1 < out.to_workers.size(); ++i)
      queued.push_back({true, out.to_workers[i], kTagHalo, payload});
    if (!out.to_workers.empty()) queued.push_back({true, out.to_workers.back(), kTagHalo, std::move(payload)});
  }
  std::lock_guard<std::mutex> lock(mutex_);
  std::move(queued.begin(), queued.end(), std::back_inserter(outgoing_));
}

std::map<int, HaloMessage> WorkerComm::wait_for_halos(std::int64_t generation) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto complete = [&] {
    for (int cell : plan_.receives)
      if (!halos_.count({generation, cell})) return false;
    return true;
  };
  changed_.wait(lock, complete);
  std::map<int, HaloMessage> result;
  for (int cell : plan_.receives) {
    auto it = halos_.find({generation, cell});
    result.emplace(cell, std::move(it->second));
    halos_.erase(it);
  }
  return result;
}

void WorkerComm::report(RecordsMessage records) {
  std::lock_guard<std::mutex> lock(mutex_);
  outgoing_.push_back({false, kMaster, kTagRecords, encode(records)});
}

void WorkerComm::set_progress(WorkerState state, std::int64_t generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = state;
  generation_ = generation;
}

void WorkerComm::gather_results(Bytes payload) {
  std::unique_lock<std::mutex> lock(mutex_);
  gather_payload_ = std::move(payload);
  gather_done_ = false;
  changed_.wait(lock, [&] { return gather_done_; });
}

void WorkerComm::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  finish_requested_ = true;
}

void WorkerComm::send_heartbeat() {
  HeartbeatMessage hb;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    hb.state = state_;
    hb.generation = generation_;
  }
  world_->send(kMaster, kTagHeartbeat, encode(hb));
  last_heartbeat_ = std::chrono::steady_clock::now();
}

bool WorkerComm::run_once() {
  bool did = false;
  // 1. Sends queued by the training thread.
  std::deque<Outgoing> out;
  std::optional<Bytes> gather;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out.swap(outgoing_);
    // Taken, not copied: the training thread waits in gather_results() until
    // gather_done_, and a worker's results are its largest message.
    gather = std::exchange(gather_payload_, std::nullopt);
  }
  for (Outgoing& o : out) {
    Communicator& comm = o.to_local ? *local_ : *world_;
    comm.send(o.dest, o.tag, std::move(o.payload));
    did = true;
  }
  // 2. Halos from the neighbours.
  if (local_) {
    while (auto msg = local_->try_receive(kAnySource, kTagHalo)) {
      HaloMessage halo = decode_halo(msg->payload);
      std::lock_guard<std::mutex> lock(mutex_);
      halos_[{halo.generation, halo.cell}] = std::move(halo);
      did = true;
    }
  }
  // 3. Heartbeat.
  if (std::chrono::steady_clock::now() - last_heartbeat_ >= heartbeat_interval_) {
    send_heartbeat();
    did = true;
  }
  world_->pending_sends();
  if (local_) local_->pending_sends();
  // 4. The final gather (a collective of GLOBAL; the master takes part).
  if (gather) {
    flush_sends(*world_);
    if (local_) flush_sends(*local_);
    global_->gather(kMaster, *gather);
    std::lock_guard<std::mutex> lock(mutex_);
    gather_done_ = true;
    did = true;
  }
  if (did) changed_.notify_all();
  return did;
}

void WorkerComm::run() {
  log::set_thread_name("comm");
  // Idle back-off, 0.2 ms doubling to 5 ms: an idle thread wakes at most
  // 200 times a second and a busy one answers within a fraction of a ms.
  IdleBackoff backoff(std::chrono::microseconds(200), std::chrono::microseconds(5000));
  for (;;) {
    const bool did = run_once();
    bool finishing;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finishing = finish_requested_ && outgoing_.empty();
    }
    if (finishing) {
      send_heartbeat();
      flush_sends(*world_);
      if (local_) flush_sends(*local_);
      return;
    }
    backoff.after_round(did);
  }
}

}  // namespace cellgan
