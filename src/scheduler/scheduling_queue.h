// SchedulingQueue: the pods waiting to be scheduled (upstream PriorityQueue).
//
// Every pending pod is in exactly one place:
//   activeQ         ready to be scheduled; popped by priority (higher first), then by the time
//                   it entered the queue (earlier first).
//   backoffQ        failed recently; waits out its backoff (1 s doubling per attempt up to 10 s,
//                   upstream's defaults) and then moves to activeQ (FlushBackoffQCompleted).
//   unschedulable   rejected by some plugins; stays until a cluster event that may help it
//                   (MoveAllToActiveOrBackoffQueue with a hint saying which pods the event may
//                   help) or until it has waited max_in_unschedulable (5 min upstream;
//                   FlushUnschedulablePodsLeftover).
//   gated           has spec.schedulingGates (upstream's SchedulingGates PreEnqueue); leaves when
//                   an update removes the gates.
//   in flight       popped and being scheduled or bound; Done ends that, or
//                   AddUnschedulableIfNotPresent puts the pod back after a failure.
//
// A move request during a pod's scheduling cycle is not lost: if a cluster event arrived after
// the pod was popped (MoveAllToActiveOrBackoffQueue's cycle >= the pod's), a rejected pod goes to
// backoffQ rather than unschedulable (upstream's moveRequestCycle). Updates and deletes of an
// in-flight pod are recorded and applied when it comes back.
//
// Time comes from the Clock, so tests drive backoff with a FakeClock and assert exact delays.
//
// Thread-safety: every method is safe to call concurrently. Pop blocks; the rest do not.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "scheduler/pod_info.h"
#include "util/clock.h"

namespace converge::scheduler {

struct QueuedPodInfo {
  PodInfoPtr pod;
  // When the pod last entered the queue: FIFO order among equal priorities, and the start of
  // its backoff.
  util::Clock::TimePoint timestamp{};
  // When it was first popped (for the end-to-end scheduling latency); unset before.
  std::optional<util::Clock::TimePoint> initial_attempt;
  int attempts = 0;   // times popped
  int64_t cycle = 0;  // the scheduling cycle of the last Pop
  // Plugins that rejected the pod in its last attempt (empty after an error).
  std::vector<std::string_view> unschedulable_plugins;
};

struct SchedulingQueueOptions {
  util::Clock* clock = &util::RealClock();
  util::Clock::Duration pod_initial_backoff = std::chrono::seconds(1);
  util::Clock::Duration pod_max_backoff = std::chrono::seconds(10);
  util::Clock::Duration max_in_unschedulable = std::chrono::minutes(5);
};

struct QueueCounts {
  size_t active = 0;
  size_t backoff = 0;
  size_t unschedulable = 0;
  size_t gated = 0;
  size_t in_flight = 0;
};

class SchedulingQueue {
 public:
  explicit SchedulingQueue(SchedulingQueueOptions options);
  SchedulingQueue(const SchedulingQueue&) = delete;
  SchedulingQueue& operator=(const SchedulingQueue&) = delete;

  // A new pending pod: activeQ, or gated. An add of a known pod is an update.
  void Add(PodInfoPtr pod);
  // A newer version of a pending pod. `spec_changed` (anything but status and bookkeeping
  // metadata changed) releases an unschedulable pod to backoffQ/activeQ, as upstream does.
  void Update(PodInfoPtr pod, bool spec_changed);
  // The pod was deleted or bound by someone else.
  void Delete(const api::ObjectKey& key);

  // The next pod to schedule; blocks until there is one, or returns nullopt once `stop` fires
  // or the queue is closed. The pod is in flight until Done or AddUnschedulableIfNotPresent.
  std::optional<QueuedPodInfo> Pop(std::stop_token stop);
  // The scheduling cycle of the last Pop (cycles count from 1).
  int64_t SchedulingCycle() const;

  // Puts back an in-flight pod that could not be scheduled (or bound). `error`: the failure was
  // not a rejection by plugins (an API error, say): straight to backoffQ. Otherwise
  // unschedulable, unless a move request arrived during its cycle `pod_cycle`, or the pod was
  // updated while in flight. A pod deleted while in flight is dropped.
  void AddUnschedulableIfNotPresent(QueuedPodInfo info, int64_t pod_cycle, bool error);
  // Ends the in-flight state of a pod that was scheduled (bound or given up).
  void Done(const api::ObjectKey& key);

  // A cluster event: moves the unschedulable pods for which `may_help` returns true to backoffQ
  // (still backing off) or activeQ, and records a move request for the pods in flight.
  // `may_help` is called under the queue's lock and must not call back into the queue.
  void MoveAllToActiveOrBackoffQueue(const std::function<bool(const QueuedPodInfo&)>& may_help);

  // Moves the pods whose backoff has expired to activeQ (upstream runs this every second).
  void FlushBackoffQCompleted();
  // Moves pods unschedulable for longer than max_in_unschedulable (upstream checks every 30 s).
  void FlushUnschedulablePodsLeftover();

  // Wakes every Pop and makes them return nullopt.
  void Close();

  QueueCounts Counts() const;
  // The backoff a pod with `attempts` attempts waits (upstream calculateBackoffDuration).
  util::Clock::Duration BackoffDuration(int attempts) const;
  // Where a pod is; for tests.
  enum class Where { kNone, kActive, kBackoff, kUnschedulable, kGated, kInFlight };
  Where Find(const api::ObjectKey& key) const;

 private:
  struct Entry {
    QueuedPodInfo info;
    Where where = Where::kNone;
    int64_t seq = 0;                 // insertion order, the final tie-break
    bool updated_in_flight = false;  // spec changed while in flight
    bool deleted_in_flight = false;
  };
  struct ActiveLess {
    bool operator()(const Entry* a, const Entry* b) const;
  };
  struct BackoffLess {
    const SchedulingQueue* queue;
    bool operator()(const Entry* a, const Entry* b) const;
  };

  util::Clock::TimePoint BackoffExpiry(const Entry& e) const;
  bool IsBackingOffLocked(const Entry& e) const;
  // Takes `e` out of its current place (not the map).
  void DetachLocked(Entry& e);
  void PutActiveLocked(Entry& e);
  void PutBackoffLocked(Entry& e);
  void PutUnschedulableLocked(Entry& e);
  void PutGatedLocked(Entry& e);
  // Backoff if still backing off, else active.
  void RequeueLocked(Entry& e);

  const SchedulingQueueOptions options_;
  util::Clock* const clock_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;  // an entry became active, or the queue closed
  // Every pod the queue knows, wherever it is (mu_). unordered_map keeps Entry addresses stable.
  std::unordered_map<api::ObjectKey, Entry> entries_;
  std::set<Entry*, ActiveLess> active_;       // guarded by mu_
  std::set<Entry*, BackoffLess> backoff_;     // guarded by mu_
  std::unordered_set<Entry*> unschedulable_;  // guarded by mu_
  size_t gated_ = 0;                          // guarded by mu_
  size_t in_flight_ = 0;                      // guarded by mu_
  int64_t seq_ = 0;                           // guarded by mu_
  int64_t scheduling_cycle_ = 0;              // guarded by mu_
  int64_t move_request_cycle_ = -1;           // guarded by mu_
  bool closed_ = false;                       // guarded by mu_
};

}  // namespace converge::scheduler
