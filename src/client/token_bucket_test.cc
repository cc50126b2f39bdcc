#include "client/token_bucket.h"

#include <gtest/gtest.h>

#include <thread>

#include "client/fake_transport.h"
#include "client/rate_limited_transport.h"

namespace converge::client {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, BurstThenOneTokenPerInterval) {
  util::FakeClock clock;
  TokenBucket bucket({.qps = 10, .burst = 3, .clock = &clock});
  // The burst is free; after it, reservations queue up 100 ms apart.
  EXPECT_EQ(bucket.Reserve(), util::Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(), util::Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(), util::Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
  EXPECT_EQ(bucket.Reserve(), milliseconds(200));
  // Time pays the debt back, and refills up to the burst only.
  clock.Step(milliseconds(200));
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
  clock.Step(std::chrono::seconds(10));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.Reserve(), util::Clock::Duration::zero());
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
}

TEST(TokenBucketTest, WaitSleepsOnTheClockAndStops) {
  util::FakeClock clock;
  TokenBucket bucket({.qps = 1, .burst = 1, .clock = &clock});
  ASSERT_TRUE(bucket.Wait());
  bool got = false;
  std::thread waiter([&] { got = bucket.Wait(); });
  clock.BlockUntilWaiters(1);
  clock.Step(std::chrono::seconds(1));
  waiter.join();
  EXPECT_TRUE(got);

  std::stop_source stop;
  std::thread stopped([&] { got = bucket.Wait(stop.get_token()); });
  clock.BlockUntilWaiters(1);
  stop.request_stop();
  stopped.join();
  EXPECT_FALSE(got);
}

TEST(RateLimitedTransportTest, TakesATokenPerRequest) {
  util::FakeClock clock;
  auto inner = std::make_unique<FakeTransport>(
      [](const HttpRequest&) { return FakeTransport::Json(200, "{}"); });
  FakeTransport* fake = inner.get();
  RateLimitedTransport t(std::move(inner), {.qps = 1, .burst = 1, .clock = &clock});
  ASSERT_TRUE(t.Do({}).ok());
  std::thread second([&] { ASSERT_TRUE(t.Do({}).ok()); });
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(fake->requests().size(), 1u);  // the second request waits for its token
  clock.Step(std::chrono::seconds(1));
  second.join();
  EXPECT_EQ(fake->requests().size(), 2u);
}

}  // namespace
}  // namespace converge::client
