#include "util/clock.h"

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
  if (Now() >= deadline) return;
  ++waiters_;
  // Poll: a Step cannot notify a cv it does not know the mutex of, so re-check the fake time every
  // millisecond. A notification (cv_status::no_timeout, or a spurious wakeup) ends the wait, as it
  // would with a real clock.
  while (Now() < deadline) {
    if (cv.wait_for(lock, std::chrono::milliseconds(1)) == std::cv_status::no_timeout) break;
  }
  --waiters_;
}

void FakeClock::BlockUntilWaiters(int n) const {
  while (Waiters() < n) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

void FakeClock::Step(Duration d) {
  offset_ns_ += d.count();
}

}  // namespace converge::util
