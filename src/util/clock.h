// Clock: where every component reads time, so that tests can drive it.
//
// Components take a `Clock*` (via their Options struct) instead of calling std::chrono directly;
// tests pass a FakeClock and assert exact delays (backoff, expectations TTLs, lease expiry).
//
// Thread-safety: all methods of RealClock and FakeClock are safe to call concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace converge::util {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;

  // Monotonic time, for deadlines and durations.
  virtual TimePoint Now() const = 0;
  // Wall-clock time, for timestamps written into objects (creationTimestamp, lastTimestamp...).
  virtual WallTime WallNow() const = 0;

  // Waits on `cv` (with `lock` held on entry and on return) until it is notified or Now() reaches
  // `deadline`. May return early; callers re-check their condition and the time in a loop.
  virtual void WaitUntil(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                         TimePoint deadline) = 0;

  // Blocks the calling thread until Now() >= Now()+d.
  void SleepFor(Duration d);
};

// The process-wide real clock.
Clock& RealClock();

// A clock that moves only when told to.
//
// WaitUntil returns once Step has moved the fake time to the deadline (noticed by polling in short
// real-time slices) or when `cv` is notified; until then the caller counts as a waiter. So a
// component whose loop waits on the clock shows up in Waiters() for as long as it is parked, and
// tests can wait for that (BlockUntilWaiters) before stepping.
class FakeClock final : public Clock {
 public:
  FakeClock();
  TimePoint Now() const override;
  WallTime WallNow() const override;
  void WaitUntil(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override;

  // Advances both monotonic and wall time by d (d >= 0).
  void Step(Duration d);
  // Number of threads currently blocked in WaitUntil with a deadline in the future.
  int Waiters() const { return waiters_.load(); }
  bool HasWaiters() const { return Waiters() > 0; }
  // Blocks (in real time) until at least n threads are blocked in WaitUntil.
  void BlockUntilWaiters(int n) const;

 private:
  std::atomic<int64_t> offset_ns_{0};
  std::atomic<int> waiters_{0};
  const TimePoint start_;
  const WallTime wall_start_;
};

}  // namespace converge::util
