#include "scheduler/worker_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <mutex>
#include <string>
#include <vector>

namespace converge::scheduler {
namespace {

// Tasks of one key run in the order they were submitted, on workers named for profiles
// (`perf report --sort comm`, `top -H`).
TEST(WorkerPoolTest, TasksOfOneKeyRunInOrderOnNamedWorkers) {
  WorkerPool pool(4);
  pool.Start();
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) {
    pool.Submit(7, [&, i] {
      char buf[32] = {};
      pthread_getname_np(pthread_self(), buf, sizeof(buf));
      std::lock_guard lock(mu);
      order.push_back(i);
      names.emplace_back(buf);
    });
  }
  pool.WaitIdle();
  pool.Stop();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  for (const std::string& name : names) EXPECT_EQ(name, "sched-worker");
}

}  // namespace
}  // namespace converge::scheduler
