#include "bench/load.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <mutex>
#include <thread>
#include <vector>

namespace converge::bench {

ClosedLoopResult RunClosedLoop(const ClosedLoopOptions& options) {
  using Clock = std::chrono::steady_clock;
  ClosedLoopResult result;
  std::mutex mu;  // guards result while the clients run
  std::atomic<bool> init_failed{false};
  Clock::time_point start;
  Progress progress(options.label, options.duration.count());
  // Every client connects first; the clock starts (on_ready) once all are ready, so connection
  // set-up in `init` is not counted. The barrier orders that write before the clients' reads.
  auto on_ready = [&start]() noexcept { start = Clock::now(); };
  std::barrier ready(options.clients + 1, on_ready);
  std::vector<std::thread> clients;
  for (int c = 0; c < options.clients; ++c) {
    clients.emplace_back([&, c] {
      if (options.init) {
        util::Status s = options.init(c);
        if (!s.ok()) {
          std::lock_guard lock(mu);
          if (result.first_error.ok()) result.first_error = s;
          init_failed = true;
        }
      }
      ready.arrive_and_wait();
      if (init_failed) return;
      Latencies mine;
      int64_t errors = 0;
      util::Status error;
      const Clock::time_point end = start + options.duration;
      for (int64_t i = 0;; ++i) {
        Clock::time_point t0 = Clock::now();
        if (t0 >= end) break;
        util::Status s = options.op(c, i);
        Clock::time_point t1 = Clock::now();
        if (s.ok()) {
          mine.Add(t1 - t0);
        } else {
          ++errors;
          if (error.ok()) error = s;
        }
        if (c == 0) {
          progress.Set(std::chrono::duration_cast<std::chrono::milliseconds>(t1 - start).count());
        }
      }
      std::lock_guard lock(mu);
      result.ops += static_cast<int64_t>(mine.size());
      result.errors += errors;
      result.latencies.Merge(mine);
      if (result.first_error.ok()) result.first_error = error;
      result.seconds = std::max(result.seconds, SecondsSince(start));
    });
  }
  ready.arrive_and_wait();
  for (std::thread& t : clients) t.join();
  progress.Finish();
  return result;
}

}  // namespace converge::bench
