// DelayingQueue: a WorkQueue that can also add an item after a delay (client-go's delaying queue).
//
// AddAfter puts the item in a waiting set ordered by ready time; a waiting loop moves items into
// the queue when their time comes, reading time from the injectable util::Clock. The loop is not
// started by the constructor. Its owner either
//   - calls Run(stop_token) on a thread of its own (a controller runner does), or
//   - calls Start() once, which runs the loop on a thread the queue owns until ShutDown; the
//     destructor joins it.
// Without a running loop, delayed items wait forever (immediate adds work regardless).
//
// An item waits at most once: adding it again while it waits keeps the earlier ready time. Items
// with the same ready time enter the queue in the order they were added. Waiting items are
// dropped at shutdown.
//
// Thread-safety: every method is safe to call concurrently. Lock order: the waiting lock (mu_) and
// the queue's lock are never held together.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <stop_token>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/workqueue.h"

namespace converge::client {

template <WorkQueueItem T>
class DelayingQueue : public WorkQueue<T> {
 public:
  using Duration = util::Clock::Duration;
  using TimePoint = util::Clock::TimePoint;

  explicit DelayingQueue(QueueOptions options = {}) : WorkQueue<T>(std::move(options)) {}

  // Shuts the queue down and joins the Start()ed loop, if any. A Run on a caller's thread must
  // have returned (the shutdown makes it return) before the queue is destroyed.
  ~DelayingQueue() override {
    this->ShutDown();
    if (loop_.joinable()) loop_.join();
  }

  // Adds item once `delay` has passed (at once if delay <= 0). If the item is already waiting, the
  // earlier ready time wins. Ignored once shutting down. Counts as a retry in the metrics, as in
  // client-go.
  void AddAfter(const T& item, Duration delay) {
    if (this->ShuttingDown()) return;
    this->RecordRetry();
    if (delay <= Duration::zero()) {
      this->Add(item);
      return;
    }
    const TimePoint now = this->clock().Now();
    // Saturate instead of overflowing on absurd delays.
    const TimePoint ready_at = delay < TimePoint::max() - now ? now + delay : TimePoint::max();
    bool new_head = false;
    {
      std::lock_guard lock(mu_);
      auto known = index_.find(item);
      if (known != index_.end()) {
        if (known->second->first.ready_at <= ready_at) return;
        waiting_.erase(known->second);
        index_.erase(known);
      }
      auto it = waiting_.emplace(WaitKey{ready_at, next_seq_++}, item).first;
      index_.emplace(item, it);
      new_head = it == waiting_.begin();
    }
    if (new_head) cv_.notify_all();
  }

  // The waiting loop: adds each waiting item to the queue once the clock reaches its ready time.
  // Returns when `stop` is requested or the queue shuts down.
  void Run(std::stop_token stop) {
    std::stop_callback on_stop(stop, [this] {
      std::lock_guard lock(mu_);
      cv_.notify_all();
    });
    std::vector<T> ready;
    std::unique_lock lock(mu_);
    while (!stop.stop_requested() && !stopping_) {
      const TimePoint now = this->clock().Now();
      while (!waiting_.empty() && waiting_.begin()->first.ready_at <= now) {
        auto head = waiting_.begin();
        index_.erase(head->second);
        ready.push_back(std::move(head->second));
        waiting_.erase(head);
      }
      if (!ready.empty()) {
        lock.unlock();
        for (const T& item : ready) this->Add(item);
        ready.clear();
        lock.lock();
        continue;
      }
      // Wake at the next ready time, and at least every kMaxWait as a heartbeat (client-go's
      // waiting loop does the same), so that no wait depends on one notification alone.
      TimePoint deadline = now + kMaxWait;
      if (!waiting_.empty()) deadline = std::min(deadline, waiting_.begin()->first.ready_at);
      this->clock().WaitUntil(cv_, lock, deadline);
    }
  }

  // Runs Run on a thread owned by the queue, until the queue shuts down. Call at most once.
  void Start() {
    loop_ = std::jthread([this](std::stop_token stop) { Run(std::move(stop)); });
  }

  // Number of items waiting for their ready time.
  [[nodiscard]] int NumWaiting() const {
    std::lock_guard lock(mu_);
    return static_cast<int>(waiting_.size());
  }

 protected:
  void OnShutDown() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      waiting_.clear();
      index_.clear();
    }
    cv_.notify_all();
  }

 private:
  // The longest the loop sleeps without re-checking the time: client-go's 10 s heartbeat.
  static constexpr Duration kMaxWait = std::chrono::seconds(10);

  struct WaitKey {
    TimePoint ready_at;
    uint64_t seq;  // insertion order among equal ready times
    auto operator<=>(const WaitKey&) const = default;
  };
  using WaitingMap = std::map<WaitKey, T>;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;  // signalled on a new earliest item, stop and shutdown
  WaitingMap waiting_;              // guarded by mu_; ordered by ready time
  // guarded by mu_; each waiting item's entry in waiting_ (an item waits at most once)
  std::unordered_map<T, typename WaitingMap::iterator> index_;
  uint64_t next_seq_ = 0;  // guarded by mu_
  bool stopping_ = false;  // guarded by mu_; set at shutdown

  std::jthread loop_;  // Start()'s thread
};

}  // namespace converge::client
