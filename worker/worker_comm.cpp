// The worker's communication thread (see worker_comm.h).
#include "worker/worker_comm.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

#include <fmt/core.h>

#include "common/error.h"
#include "common/idle_backoff.h"
#include "common/log.h"

namespace cellgan {

namespace {
constexpr int kMaster = kMasterRank;
}  // namespace

WorkerComm::WorkerComm(JobComms comms, std::chrono::milliseconds heartbeat_interval,
                       std::chrono::milliseconds master_dead_after)
    : comms_(std::move(comms)),
      heartbeat_interval_(heartbeat_interval),
      master_dead_after_(master_dead_after),
      last_from_master_(Clock::now()) {}

int WorkerComm::local_rank() const { return comms_.local ? comms_.local->rank() : 0; }
int WorkerComm::local_size() const { return comms_.local ? comms_.local->size() : 1; }

Communicator& WorkerComm::comm(Channel channel) {
  switch (channel) {
    case Channel::kWorld: return *comms_.world;
    case Channel::kGlobal: return *comms_.global;
    case Channel::kLocal: return *comms_.local;
  }
  throw std::logic_error("WorkerComm: unknown channel");
}

void WorkerComm::queue(Outgoing out) {
  MutexLock lock(mutex_);
  outgoing_.push_back(std::move(out));
  wake_requested_ = true;
  wake_.notify_one();
}

void WorkerComm::send_local(int dest, int tag, Bytes payload) {
  if (dest < 0 || dest >= local_size() || dest == local_rank())
    throw std::logic_error(fmt::format("send_local: worker {} is not another worker of 0..{}", dest, local_size() - 1));
  queue({Channel::kLocal, dest, tag, std::move(payload)});
}

std::optional<Interruption> WorkerComm::interruption_locked() {
  if (abort_) return Aborted{abort_->exit_code, abort_->reason};
  if (!rehome_) return std::nullopt;
  Rehoming rehoming{std::move(*rehome_)};
  rehome_.reset();
  return rehoming;
}

Waited<Message> WorkerComm::receive_local(int source, int tag) {
  MutexLock lock(mutex_);
  const auto key = std::make_pair(source, tag);
  ++waiters_;
  while (!abort_.has_value() && !rehome_.has_value() && !has_message(key)) lock.wait(changed_);
  --waiters_;
  if (auto interruption = interruption_locked()) return std::move(*interruption);
  auto& queue = received_[key];
  Message message = std::move(queue.front());
  queue.pop_front();
  return message;
}

bool WorkerComm::has_message(const std::pair<int, int>& key) const {
  const auto it = received_.find(key);
  return it != received_.end() && !it->second.empty();
}

Waited<std::optional<Message>> WorkerComm::try_receive_local(int source, int tag) {
  MutexLock lock(mutex_);
  if (auto interruption = interruption_locked()) return std::move(*interruption);
  const auto it = received_.find(std::make_pair(source, tag));
  if (it == received_.end() || it->second.empty()) return std::optional<Message>();
  Message message = std::move(it->second.front());
  it->second.pop_front();
  return std::optional<Message>(std::move(message));
}

std::optional<Interruption> WorkerComm::allreduce_local(std::vector<float>& values) {
  return sum_over({}, values);
}

std::optional<Interruption> WorkerComm::allreduce_among(const std::vector<int>& ranks, std::vector<float>& values) {
  const int me = local_rank();
  if (std::find(ranks.begin(), ranks.end(), me) == ranks.end())
    throw std::logic_error(fmt::format("allreduce_among: worker {} is not one of the workers it sums over", me));
  if (ranks != group_shown_) {
    for (int r : ranks)
      if (r != me) send_local(r, kTagGroup, Bytes{});
    for (int r : ranks) {
      if (r == me) continue;
      Waited<Message> shown = receive_local(r, kTagGroup);
      if (auto* interruption = std::get_if<Interruption>(&shown)) return std::move(*interruption);
    }
    group_shown_ = ranks;
  }
  return sum_over(ranks, values);
}

std::optional<Interruption> WorkerComm::sum_over(const std::vector<int>& group, std::vector<float>& values) {
  MutexLock lock(mutex_);
  sum_in_ = std::move(values);
  sum_group_ = group;
  sum_out_.reset();
  wake_requested_ = true;
  wake_.notify_one();
  ++waiters_;
  while (!sum_out_.has_value() && !abort_.has_value() && !rehome_.has_value()) lock.wait(changed_);
  --waiters_;
  if (sum_out_) {
    values = std::move(*sum_out_);
    sum_out_.reset();
    return std::nullopt;
  }
  sum_in_.reset();  // if not taken yet; a sum under way stays with the communication thread
  return interruption_locked();
}

void WorkerComm::report(const RecordsMessage& records) {
  Bytes payload = encode(records);  // encoded before the lock is taken
  queue({Channel::kWorld, kMaster, kTagRecords, std::move(payload)});
}

void WorkerComm::set_progress(WorkerState state, std::int64_t generation) {
  MutexLock lock(mutex_);
  state_ = state;
  generation_ = generation;
}

void WorkerComm::send_result(Bytes payload) {
  queue({Channel::kGlobal, kMaster, kTagResult, std::move(payload)});
}

std::optional<Interruption> WorkerComm::wait_for_done() {
  MutexLock lock(mutex_);
  while (!done_ && !abort_.has_value() && !rehome_.has_value()) lock.wait(changed_);
  return interruption_locked();
}

std::optional<Interruption> WorkerComm::interrupted() {
  MutexLock lock(mutex_);
  return interruption_locked();
}

std::optional<Aborted> WorkerComm::replace_local(std::unique_ptr<Communicator> local) {
  group_shown_.clear();
  MutexLock lock(mutex_);
  received_.clear();
  outgoing_.erase(std::remove_if(outgoing_.begin(), outgoing_.end(),
                                 [](const Outgoing& o) { return o.channel == Channel::kLocal; }),
                  outgoing_.end());
  pause_limit_.reset();
  stop_at_.reset();
  next_local_ = std::move(local);
  while (next_local_ != nullptr && !abort_.has_value()) lock.wait(changed_);
  if (abort_) return Aborted{abort_->exit_code, abort_->reason};
  return std::nullopt;
}

void WorkerComm::report_checkpoint(const CheckpointMessage& message) {
  queue({Channel::kWorld, kMaster, kTagCheckpoint, encode(message)});
}

std::optional<Interruption> WorkerComm::flush_to_master() { return flush(false); }

std::optional<Interruption> WorkerComm::flush_all() { return flush(true); }

std::optional<Interruption> WorkerComm::flush(bool peers_too) {
  MutexLock lock(mutex_);
  const auto waited_for = [peers_too](const Outgoing& o) { return peers_too || o.channel != Channel::kLocal; };
  const auto deadline = Clock::now() + master_dead_after_;
  bool flushed = false;
  for (;;) {
    flushed = abort_.has_value() || rehome_.has_value() || silent_ ||
              (!sending_ && to_master_in_flight_ == 0 && (!peers_too || to_peers_in_flight_ == 0) &&
               std::none_of(outgoing_.begin(), outgoing_.end(), waited_for));
    if (flushed || Clock::now() >= deadline) break;
    lock.wait_until(changed_, deadline);
  }
  if (auto interruption = interruption_locked()) return interruption;
  if (!flushed)
    log::warn("messages to the master{} still in flight after {} ms", peers_too ? " or the other workers" : "",
              master_dead_after_.count());
  return std::nullopt;
}

Waited<std::optional<std::int64_t>> WorkerComm::stop_at(std::int64_t completed) {
  MutexLock lock(mutex_);
  if (pause_limit_ && completed >= *pause_limit_)
    while (!stop_at_.has_value() && !abort_.has_value() && !rehome_.has_value()) lock.wait(changed_);
  if (auto interruption = interruption_locked()) return std::move(*interruption);
  return stop_at_;
}

void WorkerComm::abort_locked(int exit_code, const std::string& reason) {
  if (!abort_) abort_ = AbortMessage{exit_code, reason};
  changed_.notify_all();
}

void WorkerComm::send_failure(const std::string& reason, int exit_code) {
  Bytes payload = encode(FailureMessage{reason, exit_code});
  MutexLock lock(mutex_);
  state_ = WorkerState::kFailed;
  outgoing_.push_back({Channel::kWorld, kMaster, kTagFailure, std::move(payload)});
}

void WorkerComm::finish() {
  MutexLock lock(mutex_);
  finish_requested_ = true;
}

std::optional<AbortMessage> WorkerComm::aborted() {
  MutexLock lock(mutex_);
  return abort_;
}

bool WorkerComm::master_lost() {
  MutexLock lock(mutex_);
  return master_lost_;
}

void WorkerComm::go_silent() {
  MutexLock lock(mutex_);
  silent_ = true;
}

void WorkerComm::send_heartbeat(Clock::time_point now) {
  HeartbeatMessage hb;
  {
    MutexLock lock(mutex_);
    if (silent_) return;
    hb.state = state_;
    hb.generation = generation_;
  }
  comms_.world->send(kMaster, kTagHeartbeat, encode(hb));
  last_heartbeat_ = now;
}

bool WorkerComm::send_queued() {
  std::deque<Outgoing> out;
  bool silent;
  {
    MutexLock lock(mutex_);
    out.swap(outgoing_);
    silent = silent_;
    sending_ = sending_ || !out.empty();  // until run_once() counts them in flight
  }
  bool sent = false;
  for (Outgoing& o : out) {
    if (silent && o.channel != Channel::kLocal) continue;
    comm(o.channel).send(o.dest, o.tag, std::move(o.payload));
    sent = true;
  }
  return sent;
}

bool WorkerComm::step_sums() {
  bool did = false;
  bool start = false;
  std::vector<int> group;
  {
    MutexLock lock(mutex_);
    if (next_local_) {  // the old LOCAL's sends and sum to a lost worker never complete: they are released
      abandon_pending_sum();
      group_.reset();
      group_ranks_.clear();
      comms_.local = std::move(next_local_);
      did = true;
    }
    if (sum_in_ && !pending_sum_) {
      sum_buffer_ = std::move(*sum_in_);
      sum_in_.reset();
      group = sum_group_;
      start = true;
    }
  }
  if (start) {  // outside the lock: making a subgroup waits for its members
    // What the training thread queued before it asked (kTagGroup to the
    // subgroup's members) leaves first: they wait for it to make theirs.
    send_queued();
    pending_sum_ = sum_communicator(group).start_allreduce_sum(sum_buffer_);
    did = true;
  }
  if (pending_sum_ && pending_sum_->done()) {
    pending_sum_.reset();
    MutexLock lock(mutex_);
    sum_out_ = std::move(sum_buffer_);
    sum_buffer_ = {};
    did = true;
  }
  return did;
}

Communicator& WorkerComm::sum_communicator(const std::vector<int>& group) {
  constexpr int kSubgroupTag = 1;  // one subgroup of LOCAL is made at a time
  if (group.empty()) return *comms_.local;
  if (!group_ || group_ranks_ != group) {
    group_.reset();
    group_ = comms_.local->subgroup(group, kSubgroupTag);
    group_ranks_ = group;
  }
  return *group_;
}

bool WorkerComm::run_once(Clock::time_point now) {
  // 0. The training thread's allreduce: started, then polled.
  bool did = step_sums();
  // 1. Sends queued by the training thread.
  if (send_queued()) did = true;
  // 2. Messages from the other workers, kept by (source, tag) in order.
  if (comms_.local) {
    while (auto msg = comms_.local->try_receive()) {
      MutexLock lock(mutex_);
      received_[{msg->source, msg->tag}].push_back(std::move(*msg));
      did = true;
    }
  }
  // 3. The master: heartbeats, the stop protocol, an abort, its silence.
  if (take_from_master(now)) did = true;
  // 4. Heartbeat.
  if (now - last_heartbeat_ >= heartbeat_interval_) {
    send_heartbeat(now);
    did = true;
  }
  const std::size_t in_flight = comms_.world->pending_sends() + comms_.global->pending_sends();
  const std::size_t to_peers = comms_.local ? comms_.local->pending_sends() : 0;
  {
    MutexLock lock(mutex_);
    // flush_to_master() or flush_all() may be waiting for it
    if (sending_ || in_flight != to_master_in_flight_ || to_peers != to_peers_in_flight_) did = true;
    to_master_in_flight_ = in_flight;
    to_peers_in_flight_ = to_peers;
    sending_ = false;
  }
  if (did) changed_.notify_all();
  return did;
}

bool WorkerComm::take_from_master(Clock::time_point now) {
  bool did = false;
  while (auto msg = comms_.world->try_receive(kMaster, kAnyTag)) {
    MutexLock lock(mutex_);
    last_from_master_ = now;
    if (msg->tag == kTagAbort) {
      const AbortMessage abort = decode_abort(msg->payload);
      abort_locked(abort.exit_code, abort.reason);
    }
    if (msg->tag == kTagDone) done_ = true;
    if (msg->tag == kTagPause) {  // answered here, whatever the training thread is doing
      stop_at_.reset();
      pause_limit_ = generation_ + 1;
      outgoing_.push_back({Channel::kWorld, kMaster, kTagPaused, encode(GenerationMessage{generation_})});
    }
    if (msg->tag == kTagRehome) {
      rehome_ = decode_members(msg->payload, "rehome message");
      done_ = false;
    }
    if (msg->tag == kTagStopAt) {
      stop_at_ = decode_generation(msg->payload, "stop message").generation;
      pause_limit_.reset();
    }
    did = true;
  }
  {
    MutexLock lock(mutex_);
    if (!abort_ && !done_ && now - last_from_master_ >= master_dead_after_) {
      const double silent = std::chrono::duration<double>(now - last_from_master_).count();
      abort_locked(kExitFailure, fmt::format("the master is presumed dead: silent for {:.1f} s", silent));
      master_lost_ = true;
      did = true;
    }
  }
  return did;
}

void WorkerComm::abandon_pending_sum() {
  if (!pending_sum_) return;
  static_cast<void>(pending_sum_.release());
  static_cast<void>(new std::vector<float>(std::move(sum_buffer_)));  // moving keeps the heap buffer MPI writes
  sum_buffer_ = {};
}

void WorkerComm::flush_at_exit() {
  abandon_pending_sum();
  if (master_lost()) return;  // sends to a lost master never complete
  const auto deadline = Clock::now() + master_dead_after_;
  const auto left = [&] {
    return std::max(std::chrono::milliseconds(0),
                     std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
  };
  bool flushed = flush_sends(*comms_.world, left());
  flushed = flush_sends(*comms_.global, left()) && flushed;
  if (comms_.local) flushed = flush_sends(*comms_.local, left()) && flushed;
  if (!flushed) log::warn("messages still in flight after {} ms at exit", master_dead_after_.count());
}

void WorkerComm::run() {
  log::set_thread_name("comm");
  log::set_thread_rank(comms_.world->rank());
  // Idle back-off, 0.2 ms doubling to 5 ms: an idle thread wakes at most
  // 200 times a second and a busy one answers within a fraction of a ms.
  IdleBackoff backoff(std::chrono::microseconds(200), std::chrono::microseconds(5000));
  try {
    for (;;) {
      const bool did = run_once(Clock::now());
      bool finishing;
      {
        MutexLock lock(mutex_);
        finishing = finish_requested_ && outgoing_.empty();
      }
      if (finishing) {
        send_heartbeat(Clock::now());
        flush_at_exit();
        return;
      }
      if (did) {
        backoff.after_round(true);
        continue;
      }
      MutexLock lock(mutex_);
      const auto sleep = waiters_ > 0 ? std::chrono::microseconds(200) : backoff.idle_round();
      const auto until = Clock::now() + sleep;
      while (!wake_requested_ && lock.wait_until(wake_, until) == std::cv_status::no_timeout) {
      }
      wake_requested_ = false;
    }
  } catch (const std::exception& e) {
    log::error("communication thread: {}", e.what());
    {
      // Not exit_code_of(): what fails here is a message between ranks (a
      // truncated payload throws InputError), never the user's input.
      const bool bug = dynamic_cast<const std::logic_error*>(&e) != nullptr;
      MutexLock lock(mutex_);
      abort_locked(bug ? kExitInternal : kExitFailure, fmt::format("communication thread: {}", e.what()));
    }
    try {  // tell the master, if MPI still works
      comms_.world->send(kMaster, kTagFailure, encode(FailureMessage{fmt::format("communication thread: {}", e.what())}));
      flush_sends(*comms_.world, master_dead_after_);
    } catch (const std::exception& again) {
      log::error("could not tell the master: {}", again.what());
    }
  }
}

}  // namespace cellgan
