// RateLimitingQueue: a DelayingQueue whose items can be re-added after a delay chosen by a
// RateLimiter (client-go's rate limiting queue). This is the queue a controller uses:
//
//   RateLimitingQueue<api::ObjectKey> queue({.name = "replicaset", .clock = clock});
//   queue.Start();  // or run queue.Run(stop) on a thread of your own (see delaying_queue.h)
//   ... worker:
//   while (std::optional<api::ObjectKey> key = queue.Get()) {
//     util::Status s = Sync(*key);
//     if (s.ok()) queue.Forget(*key); else queue.AddRateLimited(*key);
//     queue.Done(*key);
//   }
//
// AddRateLimited is a retry: it asks the limiter how long the item must wait (which also records
// the failure) and adds it after that. Forget ends the item's failure streak; without it, the
// limiter keeps growing the item's delay. Neither touches the queue itself: Done is still needed.
//
// Thread-safety: every method is safe to call concurrently.
#pragma once

#include <memory>
#include <utility>

#include "client/delaying_queue.h"
#include "client/rate_limiters.h"

namespace converge::client {

template <WorkQueueItem T>
class RateLimitingQueue : public DelayingQueue<T> {
 public:
  // rate_limiter nullptr means DefaultControllerRateLimiter<T>(options.clock).
  explicit RateLimitingQueue(QueueOptions options = {},
                             std::unique_ptr<RateLimiter<T>> rate_limiter = nullptr)
      : DelayingQueue<T>(options),
        rate_limiter_(rate_limiter != nullptr ? std::move(rate_limiter)
                                              : DefaultControllerRateLimiter<T>(options.clock)) {}

  // Adds the item after the delay the rate limiter gives it.
  void AddRateLimited(const T& item) { this->AddAfter(item, rate_limiter_->When(item)); }

  // Tells the rate limiter the item is done retrying (it succeeded, or was given up on).
  void Forget(const T& item) { rate_limiter_->Forget(item); }

  // How many times the item has been rate-limited since its last Forget.
  [[nodiscard]] int NumRequeues(const T& item) { return rate_limiter_->NumRequeues(item); }

 private:
  const std::unique_ptr<RateLimiter<T>> rate_limiter_;
};

}  // namespace converge::client
