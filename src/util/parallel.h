// ParallelFor: runs fn(0) … fn(n-1) with at most `max_parallel` calls in flight, on the calling
// thread and helper threads that are started once and then kept for every later call.
//
// Why a shared pool: controllers issue a sync's creates in slow-start batches of 1, 2, 4, …, 256
// calls, each batch in parallel (upstream runs them as goroutines). Starting and joining threads
// per batch cost a ReplicaSet controller a third of its CPU in the kernel (thread stacks mapped,
// faulted in and unmapped, with TLB shootdowns on every core) while it scaled to 100,000 pods;
// the helpers here are started the first time they are needed and wait for work afterwards.
//
// The caller always takes part in its own call: it runs indices until none are left, so a call
// finishes even when every helper is busy with other callers' work (with fewer helpers, it just
// takes longer), and fn may itself call ParallelFor. The pool never holds more than
// kMaxParallelHelpers threads.
//
// Thread-safety: any number of threads may call ParallelFor at once. `fn` is called concurrently
// with itself and must not throw; every call has returned when ParallelFor returns.
#pragma once

#include <functional>

namespace converge::util {

// Helper threads the process-wide pool starts at most, over all callers.
inline constexpr int kMaxParallelHelpers = 64;

void ParallelFor(int n, int max_parallel, const std::function<void(int)>& fn);

// Helper threads started so far (for tests and metrics).
int ParallelHelperThreads();

}  // namespace converge::util
