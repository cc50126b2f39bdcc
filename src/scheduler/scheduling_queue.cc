#include "scheduler/scheduling_queue.h"

#include <algorithm>

namespace converge::scheduler {

bool SchedulingQueue::ActiveLess::operator()(const Entry* a, const Entry* b) const {
  if (a->info.pod->priority != b->info.pod->priority) {
    return a->info.pod->priority > b->info.pod->priority;
  }
  if (a->info.timestamp != b->info.timestamp) return a->info.timestamp < b->info.timestamp;
  return a->seq < b->seq;
}

bool SchedulingQueue::BackoffLess::operator()(const Entry* a, const Entry* b) const {
  auto ea = queue->BackoffExpiry(*a);
  auto eb = queue->BackoffExpiry(*b);
  if (ea != eb) return ea < eb;
  return a->seq < b->seq;
}

SchedulingQueue::SchedulingQueue(SchedulingQueueOptions options)
    : options_(std::move(options)), clock_(options_.clock), backoff_(BackoffLess{this}) {}

util::Clock::Duration SchedulingQueue::BackoffDuration(int attempts) const {
  if (attempts <= 0) return util::Clock::Duration::zero();
  util::Clock::Duration d = options_.pod_initial_backoff;
  for (int i = 1; i < attempts; ++i) {
    if (d > options_.pod_max_backoff - d) return options_.pod_max_backoff;
    d += d;
  }
  return std::min(d, options_.pod_max_backoff);
}

util::Clock::TimePoint SchedulingQueue::BackoffExpiry(const Entry& e) const {
  return e.info.timestamp + BackoffDuration(e.info.attempts);
}

bool SchedulingQueue::IsBackingOffLocked(const Entry& e) const {
  return BackoffExpiry(e) > clock_->Now();
}

void SchedulingQueue::DetachLocked(Entry& e) {
  switch (e.where) {
    case Where::kActive: active_.erase(&e); break;
    case Where::kBackoff: backoff_.erase(&e); break;
    case Where::kUnschedulable: unschedulable_.erase(&e); break;
    case Where::kGated: --gated_; break;
    case Where::kInFlight: --in_flight_; break;
    case Where::kNone: break;
  }
  e.where = Where::kNone;
}

void SchedulingQueue::PutActiveLocked(Entry& e) {
  e.where = Where::kActive;
  active_.insert(&e);
  cv_.notify_one();
}

void SchedulingQueue::PutBackoffLocked(Entry& e) {
  e.where = Where::kBackoff;
  backoff_.insert(&e);
}

void SchedulingQueue::PutUnschedulableLocked(Entry& e) {
  e.where = Where::kUnschedulable;
  unschedulable_.insert(&e);
}

void SchedulingQueue::PutGatedLocked(Entry& e) {
  e.where = Where::kGated;
  ++gated_;
}

void SchedulingQueue::RequeueLocked(Entry& e) {
  if (IsBackingOffLocked(e)) {
    PutBackoffLocked(e);
  } else {
    PutActiveLocked(e);
  }
}

void SchedulingQueue::Add(PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(pod->key);
  if (it != entries_.end()) {
    // A relist replaying a pod we hold: treat as an update of unknown extent.
    Entry& e = it->second;
    if (e.where == Where::kInFlight) {
      e.info.pod = std::move(pod);
      e.updated_in_flight = true;
      return;
    }
    DetachLocked(e);
    e.info.pod = std::move(pod);
    if (e.info.pod->gated) {
      PutGatedLocked(e);
    } else {
      RequeueLocked(e);
    }
    return;
  }
  Entry& e = entries_[pod->key];
  e.seq = ++seq_;
  e.info.timestamp = clock_->Now();
  e.info.pod = std::move(pod);
  if (e.info.pod->gated) {
    PutGatedLocked(e);
  } else {
    PutActiveLocked(e);
  }
}

void SchedulingQueue::Update(PodInfoPtr pod, bool spec_changed) {
  std::unique_lock lock(mu_);
  auto it = entries_.find(pod->key);
  if (it == entries_.end()) {
    lock.unlock();
    Add(std::move(pod));
    return;
  }
  Entry& e = it->second;
  switch (e.where) {
    case Where::kInFlight:
      e.info.pod = std::move(pod);
      e.updated_in_flight = e.updated_in_flight || spec_changed;
      return;
    case Where::kActive:
    case Where::kBackoff: {
      // Re-insert: the priority (an ordering key) may have changed.
      Where was = e.where;
      DetachLocked(e);
      e.info.pod = std::move(pod);
      if (e.info.pod->gated) {
        PutGatedLocked(e);
      } else if (was == Where::kActive) {
        PutActiveLocked(e);
      } else {
        PutBackoffLocked(e);
      }
      return;
    }
    case Where::kUnschedulable:
      e.info.pod = std::move(pod);
      if (e.info.pod->gated) {
        DetachLocked(e);
        PutGatedLocked(e);
      } else if (spec_changed) {
        DetachLocked(e);
        RequeueLocked(e);
      }
      return;
    case Where::kGated:
      e.info.pod = std::move(pod);
      if (!e.info.pod->gated) {
        DetachLocked(e);
        e.info.timestamp = clock_->Now();
        PutActiveLocked(e);
      }
      return;
    case Where::kNone: return;
  }
}

void SchedulingQueue::Delete(const api::ObjectKey& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.where == Where::kInFlight) {
    it->second.deleted_in_flight = true;
    return;
  }
  DetachLocked(it->second);
  entries_.erase(it);
}

std::optional<QueuedPodInfo> SchedulingQueue::Pop(std::stop_token stop) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, stop, [&] { return closed_ || !active_.empty(); });
  if (closed_ || active_.empty()) return std::nullopt;
  Entry& e = **active_.begin();
  DetachLocked(e);
  e.where = Where::kInFlight;
  ++in_flight_;
  e.updated_in_flight = false;
  e.deleted_in_flight = false;
  ++e.info.attempts;
  if (!e.info.initial_attempt) e.info.initial_attempt = clock_->Now();
  e.info.cycle = ++scheduling_cycle_;
  return e.info;
}

int64_t SchedulingQueue::SchedulingCycle() const {
  std::lock_guard lock(mu_);
  return scheduling_cycle_;
}

void SchedulingQueue::AddUnschedulableIfNotPresent(QueuedPodInfo info, int64_t pod_cycle,
                                                   bool error) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(info.pod->key);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.where != Where::kInFlight) return;  // already back in the queue
  if (e.deleted_in_flight) {
    DetachLocked(e);
    entries_.erase(it);
    return;
  }
  // Keep the newest object seen while in flight.
  PodInfoPtr newest = e.info.pod;
  bool updated = e.updated_in_flight;
  DetachLocked(e);
  e.info = std::move(info);
  e.info.pod = std::move(newest);
  e.info.timestamp = clock_->Now();
  if (error) e.info.unschedulable_plugins.clear();
  if (e.info.pod->gated) {
    PutGatedLocked(e);
  } else if (error || updated || move_request_cycle_ >= pod_cycle ||
             e.info.unschedulable_plugins.empty()) {
    RequeueLocked(e);
  } else {
    PutUnschedulableLocked(e);
  }
}

void SchedulingQueue::Done(const api::ObjectKey& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.where != Where::kInFlight) return;
  DetachLocked(it->second);
  entries_.erase(it);
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueue(
    const std::function<bool(const QueuedPodInfo&)>& may_help) {
  std::lock_guard lock(mu_);
  std::vector<Entry*> moving;
  for (Entry* e : unschedulable_) {
    if (!may_help || may_help(e->info)) moving.push_back(e);
  }
  for (Entry* e : moving) {
    DetachLocked(*e);
    RequeueLocked(*e);
  }
  move_request_cycle_ = scheduling_cycle_;
}

void SchedulingQueue::FlushBackoffQCompleted() {
  std::lock_guard lock(mu_);
  util::Clock::TimePoint now = clock_->Now();
  while (!backoff_.empty()) {
    Entry* e = *backoff_.begin();
    if (BackoffExpiry(*e) > now) break;
    DetachLocked(*e);
    PutActiveLocked(*e);
  }
}

void SchedulingQueue::FlushUnschedulablePodsLeftover() {
  std::lock_guard lock(mu_);
  util::Clock::TimePoint now = clock_->Now();
  std::vector<Entry*> moving;
  for (Entry* e : unschedulable_) {
    if (now - e->info.timestamp > options_.max_in_unschedulable) moving.push_back(e);
  }
  for (Entry* e : moving) {
    DetachLocked(*e);
    RequeueLocked(*e);
  }
}

void SchedulingQueue::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

QueueCounts SchedulingQueue::Counts() const {
  std::lock_guard lock(mu_);
  return {active_.size(), backoff_.size(), unschedulable_.size(), gated_, in_flight_};
}

SchedulingQueue::Where SchedulingQueue::Find(const api::ObjectKey& key) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? Where::kNone : it->second.where;
}

}  // namespace converge::scheduler
