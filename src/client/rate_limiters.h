// Rate limiters: how long a failed item waits before its next attempt (client-go's
// default_rate_limiters.go).
//
// A RateLimiter answers When(item) with a delay and records the attempt; Forget(item) ends the
// item's failure streak (call it when the item succeeds); NumRequeues(item) counts the attempts
// since. RateLimitingQueue (rate_limiting_queue.h) feeds When into DelayingQueue::AddAfter.
//
//   ItemExponentialFailureRateLimiter  per item: base · 2^failures, capped
//   BucketRateLimiter                  overall: a token bucket shared by all items
//   ItemFastSlowRateLimiter            per item: a fast delay for the first attempts, then slow
//   MaxOfRateLimiter                   the largest delay of several limiters
//   DefaultControllerRateLimiter()     max(exponential 5 ms..1000 s, bucket 10 qps burst 100)
//
// Thread-safety: every limiter here is safe to call concurrently.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/clock.h"

namespace converge::client {

template <typename T>
class RateLimiter {
 public:
  using Duration = util::Clock::Duration;

  virtual ~RateLimiter() = default;
  // How long the item should wait before its next attempt. Records the attempt.
  [[nodiscard]] virtual Duration When(const T& item) = 0;
  // Ends the item's failure streak: its next When starts from the beginning again. Call it when
  // the item was processed successfully (or dropped).
  virtual void Forget(const T& item) = 0;
  // How many attempts the item has made since its last Forget (0 for limiters that don't track
  // items).
  virtual int NumRequeues(const T& item) = 0;
};

struct ExponentialFailureOptions {
  // 5 ms: most failures are transient (a conflict on a stale cache, a brief apiserver hiccup) and
  // are gone by the first retry; at this size the first few retries cost nothing noticeable.
  util::Clock::Duration base_delay = std::chrono::milliseconds(5);
  // 1000 s (~17 min): an item that keeps failing is still retried a few times an hour, but a
  // broken item cannot keep a worker or the apiserver busy. Reached after 18 failures.
  util::Clock::Duration max_delay = std::chrono::seconds(1000);
};

// Per item: the n-th consecutive failure (counting from 0) waits base_delay · 2^n, at most
// max_delay. Overflow-safe: the doubling saturates at max_delay instead of wrapping.
template <typename T>
class ItemExponentialFailureRateLimiter final : public RateLimiter<T> {
 public:
  using Duration = util::Clock::Duration;

  explicit ItemExponentialFailureRateLimiter(ExponentialFailureOptions options = {})
      : base_(std::max(options.base_delay, Duration::zero())),
        max_(std::max(options.max_delay, Duration::zero())) {}

  Duration When(const T& item) override {
    int exp;
    {
      std::lock_guard lock(mu_);
      int& failures = failures_[item];
      exp = failures;
      if (failures < INT_MAX) ++failures;
    }
    return Backoff(base_, max_, exp);
  }

  void Forget(const T& item) override {
    std::lock_guard lock(mu_);
    failures_.erase(item);
  }

  int NumRequeues(const T& item) override {
    std::lock_guard lock(mu_);
    auto it = failures_.find(item);
    return it == failures_.end() ? 0 : it->second;
  }

  // min(base · 2^exp, max), computed without overflow.
  static Duration Backoff(Duration base, Duration max, int exp) {
    if (base == Duration::zero()) return Duration::zero();
    // base · 2^exp > max  ⇔  base > max / 2^exp (integer division), so test before shifting.
    if (exp >= 63 || base.count() > (max.count() >> exp)) return max;
    return Duration(base.count() << exp);
  }

 private:
  const Duration base_;
  const Duration max_;
  std::mutex mu_;
  std::unordered_map<T, int> failures_;  // guarded by mu_
};

struct BucketOptions {
  // 10 qps overall: once the burst is spent, retries across all items of a queue go out at most
  // this fast, so a failure storm (every key failing during an apiserver outage) cannot turn
  // into a retry storm against the apiserver.
  double qps = 10;
  // 100: a burst large enough that ordinary failures on many keys at once are not delayed at
  // all; only sustained failure is throttled.
  int burst = 100;
  // Not owned; must outlive the limiter. nullptr means util::RealClock().
  util::Clock* clock = nullptr;
};

// Overall: a token bucket of `burst` tokens refilled at `qps`, shared by every item, like
// golang.org/x/time/rate's Reserve: each When takes a token, and when none is left the item waits
// until its token will have been refilled (so successive calls space out by 1/qps). Tracks no
// items: Forget does nothing and NumRequeues is 0. Exact under a FakeClock (integer nanoseconds).
template <typename T>
class BucketRateLimiter final : public RateLimiter<T> {
 public:
  using Duration = util::Clock::Duration;
  using TimePoint = util::Clock::TimePoint;

  // qps is clamped to [0.001, 1e9] and burst to [1, 1e6], which keeps every sum of times far
  // from overflowing.
  explicit BucketRateLimiter(BucketOptions options = {})
      : clock_(options.clock != nullptr ? options.clock : &util::RealClock()),
        interval_(Interval(options.qps)),
        burst_window_(interval_ * std::clamp(options.burst, 1, 1'000'000)) {}

  Duration When(const T&) override {
    const TimePoint now = clock_->Now();
    std::lock_guard lock(mu_);
    // full_at_ is when the bucket will be full again. Each token taken moves it one interval
    // later; tokens available now = burst - (full_at_ - now) / interval. A token is free when
    // that stays >= 0 after taking it, else the caller waits for the shortfall to refill.
    full_at_ = std::max(full_at_, now) + interval_;
    return std::max(Duration::zero(), full_at_ - now - burst_window_);
  }

  void Forget(const T&) override {}
  int NumRequeues(const T&) override { return 0; }

 private:
  static Duration Interval(double qps) {
    if (!(qps >= 1e-3)) qps = 1e-3;  // also catches NaN
    if (qps > 1e9) qps = 1e9;
    return Duration(std::llround(1e9 / qps));
  }

  util::Clock* const clock_;
  const Duration interval_;      // 1/qps: one token's refill time
  const Duration burst_window_;  // burst · interval_: refill time of the whole bucket
  std::mutex mu_;
  TimePoint full_at_ = TimePoint::min();  // guarded by mu_; starts full
};

struct FastSlowOptions {
  // No defaults: the right numbers depend on the use (e.g. polling a slow external operation).
  util::Clock::Duration fast_delay{};
  util::Clock::Duration slow_delay{};
  int max_fast_attempts = 0;
};

// Per item: fast_delay for the first max_fast_attempts attempts, slow_delay after that.
template <typename T>
class ItemFastSlowRateLimiter final : public RateLimiter<T> {
 public:
  using Duration = util::Clock::Duration;

  explicit ItemFastSlowRateLimiter(FastSlowOptions options) : options_(options) {}

  Duration When(const T& item) override {
    std::lock_guard lock(mu_);
    int& attempts = attempts_[item];
    if (attempts < INT_MAX) ++attempts;
    return attempts <= options_.max_fast_attempts ? options_.fast_delay : options_.slow_delay;
  }

  void Forget(const T& item) override {
    std::lock_guard lock(mu_);
    attempts_.erase(item);
  }

  int NumRequeues(const T& item) override {
    std::lock_guard lock(mu_);
    auto it = attempts_.find(item);
    return it == attempts_.end() ? 0 : it->second;
  }

 private:
  const FastSlowOptions options_;
  std::mutex mu_;
  std::unordered_map<T, int> attempts_;  // guarded by mu_
};

// The largest delay any of its limiters asks for. Every limiter sees every When and Forget;
// NumRequeues is the largest of theirs.
template <typename T>
class MaxOfRateLimiter final : public RateLimiter<T> {
 public:
  using Duration = util::Clock::Duration;

  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter<T>>> limiters)
      : limiters_(std::move(limiters)) {}

  Duration When(const T& item) override {
    Duration longest = Duration::zero();
    for (const auto& l : limiters_) longest = std::max(longest, l->When(item));
    return longest;
  }

  void Forget(const T& item) override {
    for (const auto& l : limiters_) l->Forget(item);
  }

  int NumRequeues(const T& item) override {
    int most = 0;
    for (const auto& l : limiters_) most = std::max(most, l->NumRequeues(item));
    return most;
  }

 private:
  const std::vector<std::unique_ptr<RateLimiter<T>>> limiters_;  // constant after construction
};

// client-go's DefaultControllerRateLimiter: per-item exponential backoff (5 ms · 2^n, capped at
// 1000 s) and an overall token bucket (10 qps, burst 100), whichever asks for more.
template <typename T>
std::unique_ptr<RateLimiter<T>> DefaultControllerRateLimiter(util::Clock* clock = nullptr) {
  std::vector<std::unique_ptr<RateLimiter<T>>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter<T>>());
  limiters.push_back(std::make_unique<BucketRateLimiter<T>>(BucketOptions{.clock = clock}));
  return std::make_unique<MaxOfRateLimiter<T>>(std::move(limiters));
}

}  // namespace converge::client
