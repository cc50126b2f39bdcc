#include "client/wait.h"

#include <condition_variable>
#include <mutex>

namespace converge::client {

bool SleepUntil(util::Clock& clock, util::Clock::TimePoint deadline, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  // The callback takes the mutex so that its notify cannot fall between our check of
  // stop_requested() and the wait. It is registered before we lock: when stop was already
  // requested it runs right here.
  std::stop_callback on_stop(stop, [&] {
    std::lock_guard l(mu);
    cv.notify_all();
  });
  std::unique_lock lock(mu);
  while (!stop.stop_requested()) {
    if (clock.Now() >= deadline) return true;
    clock.WaitUntil(cv, lock, deadline);
  }
  return false;
}

bool SleepFor(util::Clock& clock, util::Clock::Duration d, std::stop_token stop) {
  return SleepUntil(clock, clock.Now() + d, std::move(stop));
}

}  // namespace converge::client
