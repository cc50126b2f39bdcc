#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "util/thread_name.h"

namespace converge::util {

namespace {

// One ParallelFor call; it lives on its caller's stack, which waits until no helper is in it.
struct ParallelJob {
  const std::function<void(int)>* fn = nullptr;
  int n = 0;
  std::atomic<int> next{0};  // the next index to claim
  // Guarded by HelperPool::mu_:
  int wanted = 0;  // helpers it may still take; listed in HelperPool::waiting_ while > 0
  int joined = 0;  // helpers running its indices now
  std::condition_variable helpers_left;  // signalled when `joined` drops to 0

  void RunIndices() {
    for (int i = next.fetch_add(1, std::memory_order_relaxed); i < n;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      (*fn)(i);
    }
  }
};

class HelperPool {
 public:
  // Never destroyed: its helpers wait for work until the process exits, and a caller running
  // during static destruction still finds the pool.
  static HelperPool& Get() {
    static HelperPool* const pool = new HelperPool();
    return *pool;
  }

  void Run(ParallelJob& job, int helpers) {
    int wake = 0;
    {
      std::lock_guard lock(mu_);
      job.wanted = helpers;
      waiting_.push_back(&job);
      wake = std::min(helpers, idle_);
      // A started helper looks for waiting jobs before it first waits: no wake-up needed.
      for (int start = std::min(helpers - wake, kMaxParallelHelpers - started_); start > 0;
           --start) {
        ++started_;
        std::thread([this] { Help(); }).detach();
      }
    }
    for (int i = 0; i < wake; ++i) work_.notify_one();

    job.RunIndices();

    std::unique_lock lock(mu_);
    if (job.wanted > 0) {
      job.wanted = 0;
      waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &job));
    }
    // Every index is claimed; helpers still inside finish the calls they claimed.
    job.helpers_left.wait(lock, [&] { return job.joined == 0; });
  }

  int started() const {
    std::lock_guard lock(mu_);
    return started_;
  }

 private:
  HelperPool() = default;

  void Help() {
    SetThreadName("parallel");
    std::unique_lock lock(mu_);
    for (;;) {
      if (waiting_.empty()) {
        ++idle_;
        work_.wait(lock, [&] { return !waiting_.empty(); });
        --idle_;
      }
      ParallelJob* job = waiting_.front();
      if (--job->wanted == 0) waiting_.pop_front();
      ++job->joined;
      lock.unlock();
      job->RunIndices();
      lock.lock();
      // Under the lock: the caller cannot see joined == 0 and return before this notify is done.
      if (--job->joined == 0) job->helpers_left.notify_one();
    }
  }

  mutable std::mutex mu_;
  std::condition_variable work_;  // signalled when a job is listed in waiting_
  // Guarded by mu_:
  std::deque<ParallelJob*> waiting_;  // jobs that may take more helpers, oldest first
  int idle_ = 0;                      // helpers waiting on work_
  int started_ = 0;                   // helpers ever started (they never exit)
};

}  // namespace

void ParallelFor(int n, int max_parallel, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  const int helpers = std::clamp(max_parallel, 1, n) - 1;
  if (helpers == 0) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  ParallelJob job;
  job.fn = &fn;
  job.n = n;
  HelperPool::Get().Run(job, helpers);
}

int ParallelHelperThreads() {
  return HelperPool::Get().started();
}

}  // namespace converge::util
