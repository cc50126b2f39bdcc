#include "controllers/common/slow_start.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace converge::controllers {

std::vector<util::Status> RunParallel(int n, const std::function<util::Status(int)>& fn,
                                      int max_parallel) {
  std::vector<util::Status> out(std::max(0, n));
  if (n <= 0) return out;
  int threads = std::clamp(max_parallel, 1, n);
  if (threads == 1) {
    for (int i = 0; i < n; ++i) out[i] = fn(i);
    return out;
  }
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) out[i] = fn(i);
  };
  std::vector<std::jthread> pool;
  pool.reserve(threads - 1);
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::jthread& t : pool) t.join();  // before `out` is returned (moved)
  return out;
}

std::vector<int> SlowStartBatchSizes(int count, int initial_batch_size) {
  std::vector<int> sizes;
  int remaining = count;
  for (int batch = std::min(remaining, initial_batch_size); batch > 0;
       batch = std::min(2 * batch, remaining)) {
    sizes.push_back(batch);
    remaining -= batch;
  }
  return sizes;
}

SlowStartResult SlowStartBatch(int count, int initial_batch_size,
                               const std::function<util::Status()>& fn, int max_parallel) {
  SlowStartResult result;
  for (int batch : SlowStartBatchSizes(count, initial_batch_size)) {
    std::vector<util::Status> statuses = RunParallel(
        batch, [&fn](int) { return fn(); }, max_parallel);
    for (const util::Status& s : statuses) {
      if (s.ok()) {
        ++result.successes;
      } else if (result.error.ok()) {
        result.error = s;
      }
    }
    if (!result.error.ok()) break;
  }
  return result;
}

}  // namespace converge::controllers
