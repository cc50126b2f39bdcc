#include "util/clock.h"

#include <algorithm>
#include <thread>

namespace converge::util {

namespace {

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  void WaitUntil(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override {
    cv.wait_until(lock, deadline);
  }
};

}  // namespace

void Clock::SleepFor(Duration d) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  const TimePoint deadline = Now() + d;
  while (Now() < deadline) WaitUntil(cv, lock, deadline);
}

Clock& RealClock() {
  static SystemClock clock;
  return clock;
}

// A fixed, recognisable start so that fake timestamps are stable across runs.
FakeClock::FakeClock()
    : start_(std::chrono::steady_clock::time_point{} + std::chrono::hours(1)),
      wall_start_(std::chrono::sys_days{std::chrono::year{2025} / 1 / 1}) {}

Clock::TimePoint FakeClock::Now() const {
  return start_ + std::chrono::nanoseconds(offset_ns_.load());
}

Clock::WallTime FakeClock::WallNow() const {
  return wall_start_ + std::chrono::duration_cast<WallTime::duration>(
                           std::chrono::nanoseconds(offset_ns_.load()));
}

void FakeClock::WaitUntil(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                          TimePoint deadline) {
  Waiter self{&cv, lock.mutex(), deadline};
  {
    std::lock_guard clock_lock(mu_);
    // Step changes the time under mu_, so either we see its new time here or it sees us below.
    if (Now() >= deadline) return;
    waiters_.push_back(&self);
  }
  // `lock` has been held since before registering, and cv.wait releases it atomically: Step,
  // which must take that mutex to notify, therefore cannot notify before we are waiting.
  cv.wait(lock);
  std::lock_guard clock_lock(mu_);
  std::erase(waiters_, &self);
}

void FakeClock::Step(Duration d) {
  {
    std::lock_guard clock_lock(mu_);
    offset_ns_ += d.count();
  }
  // Wake each waiter whose deadline has come. Lock order is waiter mutex, then mu_ (WaitUntil
  // registers with its mutex held), so here, holding mu_, the waiter mutex is only try_locked;
  // on failure (the waiter has not reached cv.wait yet, or someone else holds its mutex) drop mu_
  // and retry. Holding mu_ also keeps every listed Waiter alive.
  for (;;) {
    bool pending = false;
    {
      std::lock_guard clock_lock(mu_);
      const TimePoint now = Now();
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        Waiter* w = *it;
        if (w->deadline > now) {
          ++it;
        } else if (w->mu->try_lock()) {
          w->cv->notify_all();
          w->mu->unlock();
          it = waiters_.erase(it);
        } else {
          pending = true;
          ++it;
        }
      }
    }
    if (!pending) return;
    std::this_thread::yield();
  }
}

int FakeClock::Waiters() const {
  std::lock_guard clock_lock(mu_);
  return static_cast<int>(waiters_.size());
}

void FakeClock::BlockUntilWaiters(int n) const {
  while (Waiters() < n) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

}  // namespace converge::util
