#include "util/clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace converge::util {
namespace {

using namespace std::chrono_literals;

TEST(FakeClockTest, MovesOnlyWhenStepped) {
  FakeClock clock;
  auto t0 = clock.Now();
  auto w0 = clock.WallNow();
  EXPECT_EQ(clock.Now(), t0);
  clock.Step(5ms);
  EXPECT_EQ(clock.Now() - t0, 5ms);
  EXPECT_EQ(clock.WallNow() - w0, 5ms);
}

TEST(FakeClockTest, SleepReturnsAfterStep) {
  FakeClock clock;
  std::atomic<bool> woke{false};
  std::thread t([&] {
    clock.SleepFor(10s);
    woke = true;
  });
  while (clock.Waiters() == 0) std::this_thread::yield();
  EXPECT_FALSE(woke);
  clock.Step(9s);
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(woke);
  clock.Step(1s);
  t.join();
  EXPECT_TRUE(woke);
}

TEST(FakeClockTest, NotificationEndsAWaitBeforeTheDeadline) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable_any cv;
  bool notified = false;
  std::thread t([&] {
    std::unique_lock lock(mu);
    while (!notified) clock.WaitUntil(cv, lock, clock.Now() + 1h);
  });
  clock.BlockUntilWaiters(1);
  EXPECT_TRUE(clock.HasWaiters());
  {
    std::lock_guard lock(mu);
    notified = true;
  }
  cv.notify_all();
  t.join();  // would hang (fake time never reaches the deadline) if notify did not end the wait
  EXPECT_EQ(clock.Waiters(), 0);
}

TEST(FakeClockTest, StepWakesOnlyTheWaitersItReaches) {
  FakeClock clock;
  std::atomic<bool> short_woke{false};
  std::atomic<bool> long_woke{false};
  std::thread short_sleeper([&] {
    clock.SleepFor(5s);
    short_woke = true;
  });
  std::thread long_sleeper([&] {
    clock.SleepFor(10s);
    long_woke = true;
  });
  clock.BlockUntilWaiters(2);
  clock.Step(5s);
  short_sleeper.join();  // would hang if Step did not wake it
  EXPECT_TRUE(short_woke);
  EXPECT_FALSE(long_woke) << "its deadline is still 5 s away";
  clock.Step(5s);
  long_sleeper.join();
  EXPECT_TRUE(long_woke);
  EXPECT_EQ(clock.Waiters(), 0);
}

// Many short sleeps against many small steps: a wake-up lost between a waiter's registration and
// its cv.wait would hang this test.
TEST(FakeClockTest, NoWakeUpIsLost) {
  FakeClock clock;
  std::atomic<bool> done{false};
  std::thread sleeper([&] {
    for (int i = 0; i < 2000; ++i) clock.SleepFor(1ms);
    done = true;
  });
  while (!done) clock.Step(1ms);
  sleeper.join();
  EXPECT_GE(clock.Now() - FakeClock().Now(), 2000ms);
}

TEST(FakeClockTest, WaitUntilAPassedDeadlineReturnsAtOnce) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  clock.WaitUntil(cv, lock, clock.Now());
  EXPECT_EQ(clock.Waiters(), 0);
}

}  // namespace
}  // namespace converge::util
