#include "client/delaying_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "client/workqueue_test_util.h"

namespace converge::client {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;

// The waiting loop only moves items whose ready time the fake clock has reached, so "not yet in
// the queue" is checked right after a Step that does not reach an item's time: the loop cannot
// add it at any later moment either. Positive checks wait (Eventually) for the loop to catch up.
class DelayingQueueTest : public ::testing::Test {
 protected:
  util::FakeClock clock_;
  DelayingQueue<std::string> q_{{.clock = &clock_}};
};

TEST_F(DelayingQueueTest, AddAfterWaitsForTheClock) {
  q_.Start();
  q_.AddAfter("a", 50ms);
  EXPECT_EQ(q_.NumWaiting(), 1);
  clock_.Step(49ms);
  EXPECT_EQ(q_.Len(), 0);
  clock_.Step(1ms);
  ASSERT_TRUE(Eventually([&] { return q_.Len() == 1; }));
  EXPECT_EQ(q_.NumWaiting(), 0);
  EXPECT_EQ(q_.Get(), "a");
}

TEST_F(DelayingQueueTest, NonPositiveDelayAddsAtOnceWithoutALoop) {
  q_.AddAfter("zero", 0ms);
  q_.AddAfter("negative", -1s);
  EXPECT_EQ(q_.Len(), 2);
  EXPECT_EQ(q_.NumWaiting(), 0);
}

TEST_F(DelayingQueueTest, ItemsEnterInReadyTimeOrderThenAddOrder) {
  q_.Start();
  q_.AddAfter("c", 30ms);
  q_.AddAfter("a", 10ms);
  q_.AddAfter("b", 20ms);
  q_.AddAfter("d", 40ms);
  q_.AddAfter("e", 40ms);
  clock_.Step(40ms);  // all ready at once: order comes from ready times, ties from add order
  ASSERT_TRUE(Eventually([&] { return q_.Len() == 5; }));
  for (const char* want : {"a", "b", "c", "d", "e"}) EXPECT_EQ(q_.Get(), want);
}

TEST_F(DelayingQueueTest, ReAddingAWaitingItemKeepsTheEarlierTime) {
  q_.Start();
  q_.AddAfter("x", 50ms);
  q_.AddAfter("x", 10ms);  // earlier: replaces the 50 ms entry
  q_.AddAfter("y", 10ms);
  q_.AddAfter("y", 50ms);  // later: ignored
  EXPECT_EQ(q_.NumWaiting(), 2);
  clock_.Step(10ms);
  ASSERT_TRUE(Eventually([&] { return q_.Len() == 2; }));
  EXPECT_EQ(q_.Get(), "x");
  EXPECT_EQ(q_.Get(), "y");
  q_.Done("x");
  q_.Done("y");
  // Neither may fire again at 50 ms. The fence is ready at 50 ms too and was added last, so once
  // it is in the queue, every entry due by then has been moved.
  q_.AddAfter("fence", 40ms);
  clock_.Step(40ms);
  ASSERT_TRUE(Eventually([&] { return q_.Len() >= 1; }));
  EXPECT_EQ(q_.Len(), 1);
  EXPECT_EQ(q_.Get(), "fence");
}

TEST_F(DelayingQueueTest, AWaitingCopyIsIndependentOfAQueuedOne) {
  q_.Start();
  q_.Add("x");
  q_.AddAfter("x", 10ms);
  ASSERT_EQ(q_.Get(), "x");
  q_.Done("x");
  clock_.Step(10ms);
  ASSERT_TRUE(Eventually([&] { return q_.Len() == 1; }));
  EXPECT_EQ(q_.Get(), "x");
}

TEST_F(DelayingQueueTest, LoopWakesForANewEarlierItem) {
  q_.Start();
  q_.AddAfter("late", 1h);
  clock_.BlockUntilWaiters(1);  // the loop sleeps until its 10 s heartbeat
  q_.AddAfter("early", 10ms);
  clock_.Step(10ms);
  // Without the wake-up the loop would sleep on to its old deadline, which fake time never reaches.
  ASSERT_TRUE(Eventually([&] { return q_.Len() == 1; }));
  EXPECT_EQ(q_.Get(), "early");
  EXPECT_EQ(q_.NumWaiting(), 1);
}

TEST_F(DelayingQueueTest, ShutDownStopsTheLoopAndDropsWaitingItems) {
  std::jthread loop([&](std::stop_token stop) { q_.Run(stop); });
  q_.AddAfter("a", 10ms);
  q_.ShutDown();
  loop.join();  // Run returns at shutdown (it would hang otherwise)
  EXPECT_EQ(q_.NumWaiting(), 0);
  q_.AddAfter("b", 10ms);
  EXPECT_EQ(q_.NumWaiting(), 0) << "AddAfter after shutdown is ignored";
  clock_.Step(1h);
  EXPECT_EQ(q_.Len(), 0);
  EXPECT_EQ(q_.Get(), std::nullopt);
}

TEST_F(DelayingQueueTest, RunReturnsWhenStopIsRequested) {
  std::jthread loop([&](std::stop_token stop) { q_.Run(stop); });
  clock_.BlockUntilWaiters(1);
  loop.request_stop();
  loop.join();
  EXPECT_FALSE(q_.ShuttingDown()) << "stopping the loop does not shut the queue down";
  q_.AddAfter("a", 1ms);
  clock_.Step(1ms);
  EXPECT_EQ(q_.Len(), 0) << "nothing moves waiting items without a loop";
}

TEST_F(DelayingQueueTest, HugeDelaySaturatesInsteadOfOverflowing) {
  q_.Start();
  q_.AddAfter("never", util::Clock::Duration::max());
  q_.AddAfter("soon", 1ms);
  clock_.Step(1ms);
  ASSERT_TRUE(Eventually([&] { return q_.Len() == 1; }));
  EXPECT_EQ(q_.Get(), "soon");
  EXPECT_EQ(q_.NumWaiting(), 1);
}

TEST(DelayingQueueRealClockTest, DelayedItemArrives) {
  DelayingQueue<int> q;
  q.Start();
  q.AddAfter(7, 1ms);
  EXPECT_EQ(q.Get(), 7);  // blocks until the loop adds it
}

TEST(DelayingQueueRealClockTest, DestructorStopsAStartedLoop) {
  auto q = std::make_unique<DelayingQueue<int>>();
  q->Start();
  q->AddAfter(1, 1h);
  q.reset();  // must not hang
}

}  // namespace
}  // namespace converge::client
