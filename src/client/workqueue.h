// WorkQueue: the basic work queue of a controller (client-go's util/workqueue Typed queue).
//
// A queue of keys, never events (level-based: a worker re-reads the current state for its key).
// It guarantees:
//   - deduplication: an item added several times before a worker gets it is handed out once;
//   - one worker per item: an item handed out by Get is not handed out again until Done;
//   - no lost work: an item added while a worker holds it is handed out again after Done;
//   - FIFO order among distinct items.
//
// The usual worker loop:
//
//   while (std::optional<api::ObjectKey> key = queue.Get()) {
//     Reconcile(*key);
//     queue.Done(*key);
//   }
//
// Capabilities stack by wrapping, one per file: DelayingQueue (delaying_queue.h) adds AddAfter,
// RateLimitingQueue (rate_limiting_queue.h) adds AddRateLimited/Forget/NumRequeues.
//
// T is copyable, equality-comparable and has std::hash (api::ObjectKey and std::string qualify).
//
// Thread-safety: every method is safe to call concurrently.
#pragma once

#include <concepts>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>

#include "client/workqueue_metrics.h"
#include "util/clock.h"
#include "util/metrics.h"

namespace converge::client {

template <typename T>
concept WorkQueueItem = std::copyable<T> && std::equality_comparable<T> && requires(const T& t) {
  { std::hash<T>{}(t) } -> std::convertible_to<size_t>;
};

struct QueueOptions {
  // Names the queue in its metrics (`workqueue_depth{name="..."}`, ...; see workqueue_metrics.h).
  // Names must be unique within a registry. An empty name records no metrics at all.
  std::string name;
  // Where time comes from: metrics, and the delays of DelayingQueue and rate limiters. Not owned;
  // must outlive the queue. nullptr means util::RealClock().
  util::Clock* clock = nullptr;
  // Where a named queue's metrics go. Not owned; must outlive the queue. nullptr means
  // util::DefaultRegistry().
  util::Registry* registry = nullptr;
};

template <WorkQueueItem T>
class WorkQueue {
 public:
  explicit WorkQueue(QueueOptions options = {})
      : clock_(options.clock != nullptr ? options.clock : &util::RealClock()) {
    if (!options.name.empty()) {
      util::Registry& registry =
          options.registry != nullptr ? *options.registry : util::DefaultRegistry();
      metrics_ = std::make_unique<WorkQueueMetrics<T>>(
          WorkQueueMetricSet::Declare(registry, options.name), clock_);
      unfinished_work_hook_ = registry.AddCollectHook([this] {
        std::lock_guard lock(mu_);
        metrics_->UpdateUnfinishedWork();
      });
    }
  }
  virtual ~WorkQueue() = default;
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Marks item as needing processing. If it is already waiting, nothing changes (dedup); if a
  // worker holds it, it is handed out again after that worker's Done. Ignored once shutting down.
  void Add(const T& item) {
    {
      std::lock_guard lock(mu_);
      if (shutting_down_) return;
      if (!dirty_.insert(item).second) return;
      if (metrics_ != nullptr) metrics_->Add(item);
      if (processing_.contains(item)) return;  // Done will queue it
      queue_.push_back(item);
    }
    item_cv_.notify_one();
  }

  // Number of items waiting to be handed out (not counting items being processed).
  [[nodiscard]] int Len() const {
    std::lock_guard lock(mu_);
    return static_cast<int>(queue_.size());
  }

  // Blocks until an item is available and hands it to the caller, who must call Done(item) when
  // finished with it. Returns nullopt once the queue is shutting down and has no items left (items
  // already queued are still handed out after ShutDown).
  [[nodiscard]] std::optional<T> Get() {
    std::unique_lock lock(mu_);
    item_cv_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
    if (queue_.empty()) return std::nullopt;  // shutting down
    T item = std::move(queue_.front());
    queue_.pop_front();
    if (metrics_ != nullptr) metrics_->Get(item);
    processing_.insert(item);
    dirty_.erase(item);
    return item;
  }

  // Ends the processing of an item returned by Get. If it was added again meanwhile, it goes back
  // into the queue (also while shutting down, so that drained work is not lost). Calling Done for
  // an item that is not being processed does nothing.
  void Done(const T& item) {
    bool requeued = false;
    bool idle = false;
    {
      std::lock_guard lock(mu_);
      // An item Done twice (or never got) is ignored: re-queueing it would put a dirty item
      // into queue_ a second time.
      if (processing_.erase(item) == 0) return;
      if (metrics_ != nullptr) metrics_->Done(item);
      if (dirty_.contains(item)) {
        queue_.push_back(item);
        requeued = true;
      }
      idle = processing_.empty();
    }
    if (requeued) item_cv_.notify_one();
    if (idle) drain_cv_.notify_all();
  }

  // Stops accepting items and wakes every Get; Get hands out what is still queued, then returns
  // nullopt. Does not wait for workers. Also releases a ShutDownWithDrain that is waiting.
  void ShutDown() {
    {
      std::lock_guard lock(mu_);
      shutting_down_ = true;
      drain_ = false;
    }
    item_cv_.notify_all();
    drain_cv_.notify_all();
    OnShutDown();
  }

  // As ShutDown, then blocks until no item is being processed (every Get has had its Done), or
  // until ShutDown is called. Workers must keep calling Get and Done meanwhile.
  void ShutDownWithDrain() {
    {
      std::lock_guard lock(mu_);
      shutting_down_ = true;
      drain_ = true;
    }
    item_cv_.notify_all();
    OnShutDown();
    std::unique_lock lock(mu_);
    drain_cv_.wait(lock, [this] { return processing_.empty() || !drain_; });
  }

  bool ShuttingDown() const {
    std::lock_guard lock(mu_);
    return shutting_down_;
  }

 protected:
  // Runs once per ShutDown/ShutDownWithDrain call, after the queue is marked shutting down and
  // without the queue's lock: layers above stop their own machinery here.
  virtual void OnShutDown() {}

  util::Clock& clock() const { return *clock_; }

  // Counts a retry in the metrics of a named queue (DelayingQueue::AddAfter).
  void RecordRetry() {
    if (metrics_ != nullptr) metrics_->Retry();
  }

 private:
  util::Clock* const clock_;

  mutable std::mutex mu_;
  // Signalled when queue_ gains an item or shutting down begins.
  std::condition_variable item_cv_;
  // Signalled when processing_ becomes empty or a drain is cancelled.
  std::condition_variable drain_cv_;

  // Invariants (under mu_); together they guarantee one worker per item:
  //   - every item in queue_ is in dirty_ and not in processing_, and appears in queue_ once;
  //   - every item in dirty_ and not in processing_ is in queue_;
  //   - an item in both dirty_ and processing_ was added while a worker held it; Done moves it
  //     into queue_.
  // Get takes items only from queue_ and moves them into processing_ in one critical section;
  // only Done takes them out of processing_. So no second Get can return an item before its Done.
  std::deque<T> queue_;               // guarded by mu_; hand-out order
  std::unordered_set<T> dirty_;       // guarded by mu_; items that need processing
  std::unordered_set<T> processing_;  // guarded by mu_; items held by a worker
  bool shutting_down_ = false;        // guarded by mu_
  bool drain_ = false;                // guarded by mu_; a ShutDownWithDrain is waiting

  // Named queues only. Its per-item maps are guarded by mu_.
  std::unique_ptr<WorkQueueMetrics<T>> metrics_;
  // Declared last so that it is destroyed first: after that no collect hook can touch mu_ or
  // metrics_.
  util::CollectHook unfinished_work_hook_;
};

}  // namespace converge::client
