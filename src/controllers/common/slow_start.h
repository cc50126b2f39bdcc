// Slow-start batches and the per-sync burst cap for creating many dependents (upstream's
// slowStartBatch and --*-burst-replicas).
//
// SlowStartBatch calls `fn` `count` times in batches of 1, 2, 4, 8, ... (doubling from
// `initial_batch_size`, the last batch taking what remains). Calls within a batch run
// concurrently; a batch that sees any error ends the run: later batches are never attempted.
// Example: count 10 → batches 1, 2, 4, 3. If the 4-batch has one failure, the result is
// {successes: 6, error: that failure}, and the caller forgets the 4 creations it expected but
// never attempted or saw fail (10 - 6).
//
// Why: a quota or admission error fails every create the same way; slow start spends 1 request
// on learning that instead of 500, and spares the event stream as many FailedCreate events.
//
// Thread-safety: `fn` must be safe to call concurrently.
#pragma once

#include <functional>
#include <vector>

#include "util/status.h"

namespace converge::controllers {

// At most this many creates or deletes per sync (upstream's BurstReplicas).
inline constexpr int kBurstReplicas = 500;
inline constexpr int kSlowStartInitialBatchSize = 1;
// Calls in flight at once within one batch (a batch of 256 does not start 256 threads).
inline constexpr int kMaxParallelCalls = 16;

struct SlowStartResult {
  int successes = 0;
  util::Status error;  // the first error seen, OK when every call succeeded
};

SlowStartResult SlowStartBatch(int count, int initial_batch_size,
                               const std::function<util::Status()>& fn,
                               int max_parallel = kMaxParallelCalls);

// The batch sizes SlowStartBatch uses for `count` calls when none fails.
std::vector<int> SlowStartBatchSizes(int count, int initial_batch_size);

// Runs fn(i) for i in [0, n) with at most `max_parallel` calls in flight; returns the statuses
// in index order. (Deletes of a scale-down are issued this way: all of them, concurrently.) The
// calls run on the caller and on util::ParallelFor's helper threads, which later calls reuse.
std::vector<util::Status> RunParallel(int n, const std::function<util::Status(int)>& fn,
                                      int max_parallel = kMaxParallelCalls);

}  // namespace converge::controllers
