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
#include <vector>

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
// A thread in WaitUntil stays blocked until Step moves the fake time to its deadline or its `cv`
// is notified; it never wakes on its own. Step notifies every waiter whose deadline it reaches
// before returning, so after Step(d) returns, Waiters() counts exactly the threads still waiting
// for a later time. Tests use Waiters()/BlockUntilWaiters to know that a component's loop is
// parked before they step.
//
// Step acquires each expired waiter's mutex (the one its `lock` holds) to deliver the wake-up, so
// that it cannot be lost; do not call Step while holding such a mutex.
class FakeClock final : public Clock {
 public:
  FakeClock();
  TimePoint Now() const override;
  WallTime WallNow() const override;
  void WaitUntil(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override;

  // Advances both monotonic and wall time by d (d >= 0) and wakes the waiters it reaches.
  void Step(Duration d);
  // Number of threads currently blocked in WaitUntil.
  int Waiters() const;
  bool HasWaiters() const { return Waiters() > 0; }
  // Blocks (in real time) until at least n threads are blocked in WaitUntil.
  void BlockUntilWaiters(int n) const;

 private:
  struct Waiter {
    std::condition_variable_any* cv;
    std::mutex* mu;
    TimePoint deadline;
  };

  std::atomic<int64_t> offset_ns_{0};  // written under mu_, read without it
  const TimePoint start_;
  const WallTime wall_start_;
  mutable std::mutex mu_;
  // guarded by mu_. Entries live on their waiting threads' stacks; a waiter removes its entry
  // (under mu_) before WaitUntil returns, and Step removes the ones it has woken.
  std::vector<Waiter*> waiters_;
};

}  // namespace converge::util
