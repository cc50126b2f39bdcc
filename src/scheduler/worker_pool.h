// WorkerPool: runs the scheduler's API writes (bindings, status patches, evictions) off the
// scheduling thread, several at a time, keeping the writes about one pod in order: a task goes
// to the worker its key hashes to, and each worker runs its tasks first in, first out. So a
// PodScheduled=False patch from a failed attempt can never land after the binding of a later,
// successful one.
//
// Lifecycle: construct, Start (threads), Submit..., Stop (finishes what was submitted, then
// joins). With zero workers, Submit runs the task on the caller's thread (tests).
//
// Thread-safety: Submit, Idle and WaitIdle may be called from any thread; Start and Stop from
// the owner.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace converge::scheduler {

class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Start();
  // Runs every task submitted so far, then joins the workers. Idempotent.
  void Stop();
  void Submit(size_t key_hash, std::function<void()> task);
  // Blocks until no task is queued or running.
  void WaitIdle();
  size_t Pending() const;

 private:
  struct Worker {
    std::deque<std::function<void()>> tasks;  // guarded by mu_
    std::condition_variable cv;               // tasks queued, or stopping
    std::thread thread;
  };
  void Loop(Worker* w);

  const int n_;
  mutable std::mutex mu_;
  std::condition_variable idle_cv_;  // a worker went idle
  std::vector<std::unique_ptr<Worker>> workers_;
  bool started_ = false;   // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  size_t pending_ = 0;     // guarded by mu_: queued + running
};

}  // namespace converge::scheduler
