// What a ReplicaSet sync's 500 creates cost in threads: slow-start batches of 1, 2, 4, …, 256 and
// the remaining 245, each batch run with at most 16 calls in flight, every call waiting 100 µs
// (standing in for a create waiting on its commit). CPU time is the whole process's (helpers
// included): what is left besides the waiting is the cost of running calls on threads.
//   build/bench/parallel_bench --benchmark_repetitions=3
// BM_SlowStartOnHelperPool uses util::ParallelFor; BM_SlowStartThreadPerBatch starts and joins
// threads per batch, as controllers did before the pool.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "util/parallel.h"

namespace converge::util {
namespace {

constexpr int kCreates = 500;
constexpr int kMaxInFlight = 16;

void Call(int) {
  std::this_thread::sleep_for(std::chrono::microseconds(100));
}

template <typename RunBatch>
void SlowStart(RunBatch run_batch) {
  for (int done = 0, batch = 1; done < kCreates; done += batch, batch *= 2) {
    run_batch(std::min(batch, kCreates - done));
  }
}

void BM_SlowStartOnHelperPool(benchmark::State& state) {
  for (auto _ : state) {
    SlowStart([](int n) { ParallelFor(n, kMaxInFlight, Call); });
  }
  state.SetItemsProcessed(state.iterations() * kCreates);
}
BENCHMARK(BM_SlowStartOnHelperPool)->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

void BM_SlowStartThreadPerBatch(benchmark::State& state) {
  for (auto _ : state) {
    SlowStart([](int n) {
      std::atomic<int> next{0};
      auto work = [&] {
        for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) Call(i);
      };
      std::vector<std::thread> threads;
      for (int t = 1; t < std::min(n, kMaxInFlight); ++t) threads.emplace_back(work);
      work();
      for (std::thread& t : threads) t.join();
    });
  }
  state.SetItemsProcessed(state.iterations() * kCreates);
}
BENCHMARK(BM_SlowStartThreadPerBatch)->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace converge::util

BENCHMARK_MAIN();
