#include "util/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace converge::util {
namespace {

TEST(ParallelFor, CallsEveryIndexOnce) {
  for (int n : {0, 1, 2, 17, 1000}) {
    for (int max_parallel : {-1, 0, 1, 2, 16}) {
      std::vector<std::atomic<int>> calls(n);
      ParallelFor(n, max_parallel, [&](int i) { calls[i].fetch_add(1); });
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(calls[i].load(), 1)
            << "n " << n << " max_parallel " << max_parallel << " i " << i;
      }
    }
  }
}

TEST(ParallelFor, KeepsAtMostMaxParallelCallsInFlight) {
  std::atomic<int> in_flight{0};
  std::atomic<int> most{0};
  ParallelFor(200, 4, [&](int) {
    const int now = in_flight.fetch_add(1) + 1;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    in_flight.fetch_sub(1);
  });
  EXPECT_LE(most.load(), 4);
  EXPECT_GE(most.load(), 1);
}

// The point of the pool: later calls reuse the helpers earlier ones started, where starting
// threads per call would have made hundreds. (Counted by a thread_local flag, as a new thread's
// id may be an exited one's.)
TEST(ParallelFor, ReusesItsHelpersAcrossCalls) {
  static std::atomic<int> runs{0};  // this test may be repeated (--gtest_repeat)
  const int run = ++runs;
  std::atomic<int> threads_seen{0};
  for (int call = 0; call < 200; ++call) {
    ParallelFor(8, 4, [&](int) {
      thread_local int seen_in_run = 0;
      if (seen_in_run != run) {
        seen_in_run = run;
        threads_seen.fetch_add(1);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
  }
  // The caller and helpers the process started (other tests may have started some; never more
  // than the cap).
  EXPECT_LE(threads_seen.load(), 1 + ParallelHelperThreads());
  EXPECT_LE(ParallelHelperThreads(), kMaxParallelHelpers);
  EXPECT_GE(threads_seen.load(), 2);  // helpers did take part
}

// Callers on many threads at once, some of them nesting a call inside fn, all finish with every
// index called once: a caller never waits for a helper to become free.
TEST(ParallelFor, ConcurrentAndNestedCallersAllFinish) {
  constexpr int kCallers = 12;
  std::vector<std::atomic<int>> sums(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 20; ++round) {
        ParallelFor(10, 8, [&](int i) {
          if (c % 3 == 0) {
            ParallelFor(3, 3, [&](int j) { sums[c].fetch_add(i * 3 + j); });
          } else {
            sums[c].fetch_add(i);
          }
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    // Each round adds 0 + … + 9 = 45, or 0 + … + 29 = 435 when nested.
    EXPECT_EQ(sums[c].load(), 20 * (c % 3 == 0 ? 435 : 45)) << c;
  }
  EXPECT_LE(ParallelHelperThreads(), kMaxParallelHelpers);
}

}  // namespace
}  // namespace converge::util
