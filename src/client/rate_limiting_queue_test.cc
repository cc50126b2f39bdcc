#include "client/rate_limiting_queue.h"

#include <gtest/gtest.h>

#include <string>

#include "api/types.h"
#include "client/workqueue_test_util.h"

namespace converge::client {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;

TEST(RateLimitingQueueTest, RetriesWaitForTheLimitersDelayAndForgetResets) {
  util::FakeClock clock;
  util::Registry registry;
  RateLimitingQueue<std::string> q(
      {.name = "rl", .clock = &clock, .registry = &registry},
      std::make_unique<ItemExponentialFailureRateLimiter<std::string>>(
          ExponentialFailureOptions{.base_delay = 1ms, .max_delay = 1s}));
  q.Start();

  q.AddRateLimited("one");  // 1 ms
  EXPECT_EQ(q.NumRequeues("one"), 1);
  EXPECT_EQ(q.Len(), 0);
  clock.Step(1ms);
  ASSERT_TRUE(Eventually([&] { return q.Len() == 1; }));
  ASSERT_EQ(q.Get(), "one");

  q.AddRateLimited("one");  // 2 ms, fires while "one" is being processed
  EXPECT_EQ(q.NumRequeues("one"), 2);
  clock.Step(1ms);
  EXPECT_EQ(q.NumWaiting(), 1);
  clock.Step(1ms);
  // The loop's Add is visible only in the metrics while the item is held.
  util::Counter& adds = *WorkQueueMetricSet::Declare(registry, "rl").adds;
  ASSERT_TRUE(Eventually([&] { return adds.Value() == 2; }));
  EXPECT_EQ(q.Len(), 0) << "held by a worker: queued again only after Done";
  q.Done("one");
  EXPECT_EQ(q.Len(), 1);
  ASSERT_EQ(q.Get(), "one");

  q.Forget("one");  // success
  q.Done("one");
  EXPECT_EQ(q.NumRequeues("one"), 0);
  q.AddRateLimited("one");  // back to 1 ms
  clock.Step(1ms);
  ASSERT_TRUE(Eventually([&] { return q.Len() == 1; }));
}

TEST(RateLimitingQueueTest, DefaultsToTheControllerRateLimiter) {
  util::FakeClock clock;
  RateLimitingQueue<api::ObjectKey> q({.clock = &clock});
  q.Start();
  const api::ObjectKey key{"default", "web"};
  q.AddRateLimited(key);  // 5 ms
  clock.Step(4ms);
  EXPECT_EQ(q.Len(), 0);
  clock.Step(1ms);
  ASSERT_TRUE(Eventually([&] { return q.Len() == 1; }));
  ASSERT_EQ(q.Get(), key);
  q.Done(key);
  q.AddRateLimited(key);  // 10 ms
  EXPECT_EQ(q.NumRequeues(key), 2);
  clock.Step(9ms);
  EXPECT_EQ(q.Len(), 0);
  clock.Step(1ms);
  ASSERT_TRUE(Eventually([&] { return q.Len() == 1; }));
}

TEST(RateLimitingQueueTest, ShutDownIgnoresRetries) {
  util::FakeClock clock;
  RateLimitingQueue<std::string> q({.clock = &clock});
  q.Start();
  q.ShutDown();
  q.AddRateLimited("one");
  EXPECT_EQ(q.NumWaiting(), 0);
  EXPECT_EQ(q.Get(), std::nullopt);
}

}  // namespace
}  // namespace converge::client
