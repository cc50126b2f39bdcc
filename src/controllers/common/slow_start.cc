#include "controllers/common/slow_start.h"

#include <algorithm>

#include "util/parallel.h"

namespace converge::controllers {

std::vector<util::Status> RunParallel(int n, const std::function<util::Status(int)>& fn,
                                      int max_parallel) {
  std::vector<util::Status> out(std::max(0, n));
  util::ParallelFor(n, max_parallel, [&](int i) { out[i] = fn(i); });
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
