#include "scheduler/worker_pool.h"

#include "util/thread_name.h"

namespace converge::scheduler {

WorkerPool::WorkerPool(int workers) : n_(workers < 0 ? 0 : workers) {
  for (int i = 0; i < n_; ++i) workers_.push_back(std::make_unique<Worker>());
}

WorkerPool::~WorkerPool() {
  Stop();
}

void WorkerPool::Start() {
  std::lock_guard lock(mu_);
  if (started_) return;
  started_ = true;
  for (auto& w : workers_) {
    Worker* raw = w.get();
    w->thread = std::thread([this, raw] {
      util::SetThreadName("sched-worker");
      Loop(raw);
    });
  }
}

void WorkerPool::Stop() {
  {
    std::lock_guard lock(mu_);
    if (!started_ || stopping_) return;
    stopping_ = true;
    for (auto& w : workers_) w->cv.notify_one();
  }
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

void WorkerPool::Submit(size_t key_hash, std::function<void()> task) {
  if (n_ == 0) {
    task();
    return;
  }
  std::lock_guard lock(mu_);
  Worker& w = *workers_[key_hash % workers_.size()];
  w.tasks.push_back(std::move(task));
  ++pending_;
  w.cv.notify_one();
}

void WorkerPool::Loop(Worker* w) {
  std::unique_lock lock(mu_);
  for (;;) {
    w->cv.wait(lock, [&] { return stopping_ || !w->tasks.empty(); });
    if (w->tasks.empty()) return;  // stopping, and everything submitted has run
    std::function<void()> task = std::move(w->tasks.front());
    w->tasks.pop_front();
    lock.unlock();
    task();
    lock.lock();
    --pending_;
    idle_cv_.notify_all();
  }
}

void WorkerPool::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return pending_ == 0; });
}

size_t WorkerPool::Pending() const {
  std::lock_guard lock(mu_);
  return pending_;
}

}  // namespace converge::scheduler
