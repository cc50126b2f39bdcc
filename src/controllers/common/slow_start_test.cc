#include "controllers/common/slow_start.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

namespace converge::controllers {
namespace {

TEST(SlowStartTest, BatchSizesDouble) {
  EXPECT_EQ(SlowStartBatchSizes(0, 1), std::vector<int>{});
  EXPECT_EQ(SlowStartBatchSizes(1, 1), std::vector<int>({1}));
  EXPECT_EQ(SlowStartBatchSizes(10, 1), std::vector<int>({1, 2, 4, 3}));
  EXPECT_EQ(SlowStartBatchSizes(15, 1), std::vector<int>({1, 2, 4, 8}));
  EXPECT_EQ(SlowStartBatchSizes(500, 1), std::vector<int>({1, 2, 4, 8, 16, 32, 64, 128, 245}));
  EXPECT_EQ(SlowStartBatchSizes(5, 2), std::vector<int>({2, 3}));
}

TEST(SlowStartTest, AllSucceed) {
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(10, 1, [&] {
    ++calls;
    return util::Status();
  });
  EXPECT_EQ(r.successes, 10);
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(calls.load(), 10);
}

TEST(SlowStartTest, StopsAfterTheBatchWithAnError) {
  // Calls 1..3 succeed (batches 1 and 2), then every call fails: the 4-batch runs in full (its
  // calls are concurrent), nothing after it.
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(20, 1, [&] {
    int n = ++calls;
    return n <= 3 ? util::Status() : util::ResourceExhausted("quota");
  });
  EXPECT_EQ(calls.load(), 7);
  EXPECT_EQ(r.successes, 3);
  EXPECT_EQ(r.error.code(), util::Code::kResourceExhausted);
}

TEST(SlowStartTest, FirstCallFailingStopsEverything) {
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(500, 1, [&] {
    ++calls;
    return util::Unavailable("down");
  });
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(r.successes, 0);
  EXPECT_FALSE(r.error.ok());
}

TEST(SlowStartTest, RunParallelKeepsIndexOrder) {
  std::vector<util::Status> out = RunParallel(
      40, [](int i) { return i % 3 == 0 ? util::NotFound(std::to_string(i)) : util::Status(); }, 4);
  ASSERT_EQ(out.size(), 40u);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(out[i].ok(), i % 3 != 0) << i;
    if (!out[i].ok()) {
      EXPECT_EQ(out[i].message(), std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace converge::controllers
