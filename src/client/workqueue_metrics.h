// Work queue metrics, with client-go's names (k8s.io/component-base workqueue metrics), each
// labelled by the queue's name:
//
//   workqueue_depth                             gauge      items waiting (dirty, not yet handed
//   out) workqueue_adds_total                        counter    adds that were not deduplicated
//   away workqueue_queue_duration_seconds            histogram  first add to Get
//   workqueue_work_duration_seconds             histogram  Get to Done
//   workqueue_unfinished_work_seconds           gauge      summed age of items being processed
//   workqueue_longest_running_processor_seconds gauge      age of the oldest item being processed
//   workqueue_retries_total                     counter    AddAfter calls (AddRateLimited included)
//
// The two "unfinished" gauges depend on time rather than on events, so the queue sets them from a
// registry collect hook: they are exact at every scrape (and under a FakeClock, in tests).
#pragma once

#include <algorithm>
#include <chrono>
#include <string_view>
#include <unordered_map>

#include "util/clock.h"
#include "util/metrics.h"

namespace converge::client {

// The metric children of one named queue. Declares the families in `registry` on first use.
struct WorkQueueMetricSet {
  util::Gauge* depth;
  util::Counter* adds;
  util::Histogram* queue_duration;
  util::Histogram* work_duration;
  util::Gauge* unfinished_work;
  util::Gauge* longest_running_processor;
  util::Counter* retries;

  static WorkQueueMetricSet Declare(util::Registry& registry, std::string_view queue_name);
};

// Per-item bookkeeping behind the metrics of one queue, as client-go's defaultQueueMetrics.
//
// Thread-safety: not thread-safe. The owning queue calls Add, Get, Done and UpdateUnfinishedWork
// with its own lock held; Retry only touches an atomic counter and needs no lock.
template <typename T>
class WorkQueueMetrics {
 public:
  WorkQueueMetrics(WorkQueueMetricSet set, util::Clock* clock) : set_(set), clock_(clock) {}

  // An add that was not deduplicated away. The queue time counts from the first such add.
  void Add(const T& item) {
    set_.adds->Inc();
    set_.depth->Inc();
    add_times_.try_emplace(item, clock_->Now());
  }

  // The item was handed to a worker.
  void Get(const T& item) {
    const util::Clock::TimePoint now = clock_->Now();
    set_.depth->Dec();
    processing_start_times_.insert_or_assign(item, now);
    auto it = add_times_.find(item);
    if (it != add_times_.end()) {
      set_.queue_duration->Observe(Seconds(now - it->second));
      add_times_.erase(it);
    }
  }

  // The worker finished the item.
  void Done(const T& item) {
    auto it = processing_start_times_.find(item);
    if (it == processing_start_times_.end()) return;
    set_.work_duration->Observe(Seconds(clock_->Now() - it->second));
    processing_start_times_.erase(it);
  }

  void Retry() { set_.retries->Inc(); }

  // Sets the two gauges of work in progress from the current time.
  void UpdateUnfinishedWork() {
    const util::Clock::TimePoint now = clock_->Now();
    double total = 0;
    double oldest = 0;
    for (const auto& [item, start] : processing_start_times_) {
      const double age = Seconds(now - start);
      total += age;
      oldest = std::max(oldest, age);
    }
    set_.unfinished_work->Set(total);
    set_.longest_running_processor->Set(oldest);
  }

 private:
  static double Seconds(util::Clock::Duration d) {
    return std::chrono::duration<double>(d).count();
  }

  const WorkQueueMetricSet set_;
  util::Clock* const clock_;
  std::unordered_map<T, util::Clock::TimePoint> add_times_;
  std::unordered_map<T, util::Clock::TimePoint> processing_start_times_;
};

}  // namespace converge::client
