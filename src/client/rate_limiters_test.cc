#include "client/rate_limiters.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace converge::client {
namespace {

using namespace std::chrono_literals;
using Duration = util::Clock::Duration;

std::vector<Duration> Whens(RateLimiter<std::string>& limiter, const std::string& item, int n) {
  std::vector<Duration> out;
  for (int i = 0; i < n; ++i) out.push_back(limiter.When(item));
  return out;
}

TEST(ItemExponentialFailureRateLimiterTest, DefaultsDoubleFrom5msAndForgetResets) {
  ItemExponentialFailureRateLimiter<std::string> limiter;
  EXPECT_EQ(Whens(limiter, "one", 4), (std::vector<Duration>{5ms, 10ms, 20ms, 40ms}));
  EXPECT_EQ(limiter.NumRequeues("one"), 4);
  limiter.Forget("one");
  EXPECT_EQ(limiter.NumRequeues("one"), 0);
  EXPECT_EQ(Whens(limiter, "one", 2), (std::vector<Duration>{5ms, 10ms}));
}

TEST(ItemExponentialFailureRateLimiterTest, OneMillisecondBase) {
  ItemExponentialFailureRateLimiter<std::string> limiter({.base_delay = 1ms, .max_delay = 1s});
  EXPECT_EQ(Whens(limiter, "one", 5), (std::vector<Duration>{1ms, 2ms, 4ms, 8ms, 16ms}));
  EXPECT_EQ(limiter.NumRequeues("one"), 5);
  limiter.Forget("one");
  EXPECT_EQ(Whens(limiter, "one", 5), (std::vector<Duration>{1ms, 2ms, 4ms, 8ms, 16ms}));
}

TEST(ItemExponentialFailureRateLimiterTest, ItemsBackOffIndependently) {
  ItemExponentialFailureRateLimiter<std::string> limiter({.base_delay = 1ms, .max_delay = 1s});
  EXPECT_EQ(limiter.When("one"), 1ms);
  EXPECT_EQ(limiter.When("one"), 2ms);
  EXPECT_EQ(limiter.When("two"), 1ms);
  limiter.Forget("two");
  EXPECT_EQ(limiter.When("one"), 4ms);
  EXPECT_EQ(limiter.NumRequeues("one"), 3);
  EXPECT_EQ(limiter.NumRequeues("two"), 0);
}

TEST(ItemExponentialFailureRateLimiterTest, CapsAtMaxDelay) {
  ItemExponentialFailureRateLimiter<std::string> limiter({.base_delay = 1ms, .max_delay = 1s});
  const std::vector<Duration> got = Whens(limiter, "one", 13);
  EXPECT_EQ(got[9], 512ms);
  EXPECT_EQ(got[10], 1s);  // 1024 ms, capped
  EXPECT_EQ(got[11], 1s);
  EXPECT_EQ(got[12], 1s);
}

TEST(ItemExponentialFailureRateLimiterTest, DefaultCapIsReachedOnThe19thFailure) {
  ItemExponentialFailureRateLimiter<std::string> limiter;
  const std::vector<Duration> got = Whens(limiter, "one", 20);
  EXPECT_EQ(got[17], 655360ms);  // 5 ms · 2^17
  EXPECT_EQ(got[18], 1000s);     // 5 ms · 2^18 = 1310.72 s > 1000 s
  EXPECT_EQ(got[19], 1000s);
}

TEST(ItemExponentialFailureRateLimiterTest, NeverOverflows) {
  ItemExponentialFailureRateLimiter<std::string> limiter(
      {.base_delay = 1h, .max_delay = Duration::max()});
  Duration last = Duration::zero();
  for (int i = 0; i < 200; ++i) {
    const Duration d = limiter.When("one");
    ASSERT_GE(d, last) << "failure " << i;
    last = d;
  }
  EXPECT_EQ(last, Duration::max());

  using Limiter = ItemExponentialFailureRateLimiter<int>;
  EXPECT_EQ(Limiter::Backoff(1ns, Duration::max(), 62), Duration(int64_t{1} << 62));
  EXPECT_EQ(Limiter::Backoff(1ns, Duration::max(), 63), Duration::max());
  EXPECT_EQ(Limiter::Backoff(2ns, Duration::max(), 62), Duration::max());
  EXPECT_EQ(Limiter::Backoff(3ns, 10ns, 1), 6ns);
  EXPECT_EQ(Limiter::Backoff(3ns, 10ns, 2), 10ns);
  EXPECT_EQ(Limiter::Backoff(0ns, 10ns, 100), 0ns);
}

TEST(BucketRateLimiterTest, BurstThenOneTokenPerInterval) {
  util::FakeClock clock;
  BucketRateLimiter<std::string> limiter({.clock = &clock});  // 10 qps, burst 100
  for (int i = 0; i < 100; ++i) ASSERT_EQ(limiter.When("x"), 0ms) << "call " << i;
  EXPECT_EQ(limiter.When("x"), 100ms);
  EXPECT_EQ(limiter.When("y"), 200ms) << "the bucket is shared by all items";
  EXPECT_EQ(limiter.When("x"), 300ms);
  EXPECT_EQ(limiter.NumRequeues("x"), 0);
  limiter.Forget("x");
  EXPECT_EQ(limiter.When("x"), 400ms) << "Forget does not refill the bucket";
}

TEST(BucketRateLimiterTest, RefillsWithTimeUpToTheBurst) {
  util::FakeClock clock;
  BucketRateLimiter<std::string> limiter({.clock = &clock});
  for (int i = 0; i < 103; ++i) (void)limiter.When("x");  // 3 tokens in debt
  clock.Step(1s);                                         // 10 tokens back: 7 available
  for (int i = 0; i < 7; ++i) ASSERT_EQ(limiter.When("x"), 0ms) << "call " << i;
  EXPECT_EQ(limiter.When("x"), 100ms);

  clock.Step(1h);  // refills to the burst, no further
  for (int i = 0; i < 100; ++i) ASSERT_EQ(limiter.When("x"), 0ms) << "call " << i;
  EXPECT_EQ(limiter.When("x"), 100ms);
}

TEST(BucketRateLimiterTest, CustomRateAndBurst) {
  util::FakeClock clock;
  BucketRateLimiter<std::string> limiter({.qps = 4, .burst = 1, .clock = &clock});
  EXPECT_EQ(limiter.When("x"), 0ms);
  EXPECT_EQ(limiter.When("x"), 250ms);
  EXPECT_EQ(limiter.When("x"), 500ms);
  clock.Step(250ms);
  EXPECT_EQ(limiter.When("x"), 500ms);
}

TEST(ItemFastSlowRateLimiterTest, FastThenSlowAndForgetResets) {
  ItemFastSlowRateLimiter<std::string> limiter(
      {.fast_delay = 5ms, .slow_delay = 10s, .max_fast_attempts = 3});
  EXPECT_EQ(Whens(limiter, "one", 5), (std::vector<Duration>{5ms, 5ms, 5ms, 10s, 10s}));
  EXPECT_EQ(limiter.NumRequeues("one"), 5);
  EXPECT_EQ(limiter.When("two"), 5ms);
  limiter.Forget("one");
  EXPECT_EQ(limiter.NumRequeues("one"), 0);
  EXPECT_EQ(limiter.When("one"), 5ms);
}

TEST(MaxOfRateLimiterTest, TakesTheLongestDelayOfAll) {
  std::vector<std::unique_ptr<RateLimiter<std::string>>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter<std::string>>(
      ExponentialFailureOptions{.base_delay = 1ms, .max_delay = 1s}));
  limiters.push_back(std::make_unique<ItemFastSlowRateLimiter<std::string>>(
      FastSlowOptions{.fast_delay = 2ms, .slow_delay = 3ms, .max_fast_attempts = 2}));
  MaxOfRateLimiter<std::string> limiter(std::move(limiters));
  // exponential 1, 2, 4, 8; fast/slow 2, 2, 3, 3.
  EXPECT_EQ(Whens(limiter, "one", 4), (std::vector<Duration>{2ms, 2ms, 4ms, 8ms}));
  EXPECT_EQ(limiter.NumRequeues("one"), 4);
  limiter.Forget("one");  // forgets in every limiter
  EXPECT_EQ(limiter.NumRequeues("one"), 0);
  EXPECT_EQ(Whens(limiter, "one", 3), (std::vector<Duration>{2ms, 2ms, 4ms}));
}

TEST(MaxOfRateLimiterTest, NumRequeuesIsTheLargest) {
  std::vector<std::unique_ptr<RateLimiter<std::string>>> limiters;
  util::FakeClock clock;
  limiters.push_back(std::make_unique<BucketRateLimiter<std::string>>(
      BucketOptions{.clock = &clock}));  // always 0
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter<std::string>>());
  MaxOfRateLimiter<std::string> limiter(std::move(limiters));
  (void)limiter.When("one");
  (void)limiter.When("one");
  EXPECT_EQ(limiter.NumRequeues("one"), 2);
}

TEST(DefaultControllerRateLimiterTest, MaxOfExponentialAndBucket) {
  util::FakeClock clock;
  auto limiter = DefaultControllerRateLimiter<std::string>(&clock);
  EXPECT_EQ(limiter->When("one"), 5ms);
  EXPECT_EQ(limiter->When("one"), 10ms);
  // 98 more first failures spend the rest of the burst: each waits only its own 5 ms.
  for (int i = 0; i < 98; ++i) ASSERT_EQ(limiter->When("item-" + std::to_string(i)), 5ms);
  // The bucket is empty now: it dominates a fresh item's 5 ms.
  EXPECT_EQ(limiter->When("fresh"), 100ms);
  EXPECT_EQ(limiter->When("one"), 200ms);  // exponential says 20 ms; the bucket says more
  EXPECT_EQ(limiter->NumRequeues("one"), 3);
  limiter->Forget("one");
  EXPECT_EQ(limiter->NumRequeues("one"), 0);
  clock.Step(1h);
  EXPECT_EQ(limiter->When("one"), 5ms);
}

}  // namespace
}  // namespace converge::client
