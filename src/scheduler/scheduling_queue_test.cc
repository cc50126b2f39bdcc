#include "scheduler/scheduling_queue.h"

#include <gtest/gtest.h>

#include <thread>

#include "scheduler/filters.h"
#include "scheduler/scheduler_test_util.h"

namespace converge::scheduler {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::PodBuilder;
using Where = SchedulingQueue::Where;

class QueueTest : public ::testing::Test {
 protected:
  QueueTest() : queue_({.clock = &clock_}) {}

  QueuedPodInfo Pop() {
    std::optional<QueuedPodInfo> p = queue_.Pop({});
    EXPECT_TRUE(p.has_value());
    return *p;
  }
  // Pops `name` and reports it unschedulable by `plugin`.
  QueuedPodInfo FailUnschedulable(std::string_view plugin = kNodeResourcesFit) {
    QueuedPodInfo p = Pop();
    p.unschedulable_plugins = {plugin};
    queue_.AddUnschedulableIfNotPresent(p, p.cycle, /*error=*/false);
    return p;
  }
  api::ObjectKey Key(const std::string& name) { return {"default", name}; }

  util::FakeClock clock_;
  SchedulingQueue queue_;
};

TEST_F(QueueTest, PopsByPriorityThenFifo) {
  queue_.Add(PodBuilder("low-1").Priority(1).Info());
  clock_.Step(milliseconds(1));
  queue_.Add(PodBuilder("high").Priority(10).Info());
  clock_.Step(milliseconds(1));
  queue_.Add(PodBuilder("low-2").Priority(1).Info());
  clock_.Step(milliseconds(1));
  queue_.Add(PodBuilder("mid").Priority(5).Info());
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) order.push_back(Pop().pod->key.name);
  EXPECT_EQ(order, (std::vector<std::string>{"high", "mid", "low-1", "low-2"}));
  EXPECT_EQ(queue_.SchedulingCycle(), 4);
}

TEST_F(QueueTest, BackoffDoublesFromOneSecondToTen) {
  EXPECT_EQ(queue_.BackoffDuration(0), seconds(0));
  EXPECT_EQ(queue_.BackoffDuration(1), seconds(1));
  EXPECT_EQ(queue_.BackoffDuration(2), seconds(2));
  EXPECT_EQ(queue_.BackoffDuration(3), seconds(4));
  EXPECT_EQ(queue_.BackoffDuration(4), seconds(8));
  EXPECT_EQ(queue_.BackoffDuration(5), seconds(10));
  EXPECT_EQ(queue_.BackoffDuration(50), seconds(10));
}

TEST_F(QueueTest, ErrorsGoToBackoffAndComeBackWhenItExpires) {
  queue_.Add(PodBuilder("p").Info());
  QueuedPodInfo p = Pop();
  queue_.AddUnschedulableIfNotPresent(p, p.cycle, /*error=*/true);
  EXPECT_EQ(queue_.Find(Key("p")), Where::kBackoff);
  clock_.Step(milliseconds(999));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.Find(Key("p")), Where::kBackoff);
  clock_.Step(milliseconds(1));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.Find(Key("p")), Where::kActive);
  // Second failure: two seconds.
  p = Pop();
  EXPECT_EQ(p.attempts, 2);
  queue_.AddUnschedulableIfNotPresent(p, p.cycle, true);
  clock_.Step(milliseconds(1999));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.Find(Key("p")), Where::kBackoff);
  clock_.Step(milliseconds(1));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.Find(Key("p")), Where::kActive);
}

TEST_F(QueueTest, UnschedulablePodsWaitForAnEventThatMayHelp) {
  queue_.Add(PodBuilder("needs-cpu").Info());
  queue_.Add(PodBuilder("needs-label").Info());
  FailUnschedulable(kNodeResourcesFit);
  FailUnschedulable(kNodeAffinity);
  EXPECT_EQ(queue_.Counts().unschedulable, 2u);
  // An event that helps only pods rejected for resources.
  queue_.MoveAllToActiveOrBackoffQueue(
      [](const QueuedPodInfo& p) { return p.unschedulable_plugins[0] == kNodeResourcesFit; });
  // Still inside its 1 s backoff: backoffQ, then activeQ.
  EXPECT_EQ(queue_.Find(Key("needs-cpu")), Where::kBackoff);
  EXPECT_EQ(queue_.Find(Key("needs-label")), Where::kUnschedulable);
  clock_.Step(seconds(1));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.Find(Key("needs-cpu")), Where::kActive);
  // Once the backoff has passed, an event moves the pod straight to activeQ.
  clock_.Step(seconds(5));
  queue_.MoveAllToActiveOrBackoffQueue(nullptr);
  EXPECT_EQ(queue_.Find(Key("needs-label")), Where::kActive);
}

TEST_F(QueueTest, LeftoverUnschedulablePodsAreRetriedAfterFiveMinutes) {
  queue_.Add(PodBuilder("p").Info());
  FailUnschedulable();
  clock_.Step(seconds(299));
  queue_.FlushUnschedulablePodsLeftover();
  EXPECT_EQ(queue_.Find(Key("p")), Where::kUnschedulable);
  clock_.Step(seconds(2));
  queue_.FlushUnschedulablePodsLeftover();
  EXPECT_EQ(queue_.Find(Key("p")), Where::kActive);
}

TEST_F(QueueTest, AnEventDuringTheCycleIsNotLost) {
  queue_.Add(PodBuilder("p").Info());
  QueuedPodInfo p = Pop();
  // A node was added while p was being scheduled (its cycle saw the old snapshot).
  queue_.MoveAllToActiveOrBackoffQueue(nullptr);
  p.unschedulable_plugins = {kNodeResourcesFit};
  queue_.AddUnschedulableIfNotPresent(p, p.cycle, false);
  EXPECT_EQ(queue_.Find(Key("p")), Where::kBackoff);
  // Without such an event it would have waited as unschedulable.
  queue_.Add(PodBuilder("q").Info());
  QueuedPodInfo q = Pop();
  q.unschedulable_plugins = {kNodeResourcesFit};
  queue_.AddUnschedulableIfNotPresent(q, q.cycle, false);
  EXPECT_EQ(queue_.Find(Key("q")), Where::kUnschedulable);
}

TEST_F(QueueTest, SpecUpdatesReleaseUnschedulablePodsButStatusUpdatesDoNot) {
  queue_.Add(PodBuilder("p").Info());
  FailUnschedulable();
  queue_.Update(PodBuilder("p").ResourceVersion("2").Info(), /*spec_changed=*/false);
  EXPECT_EQ(queue_.Find(Key("p")), Where::kUnschedulable);
  clock_.Step(seconds(2));
  queue_.Update(PodBuilder("p").Req("1m").ResourceVersion("3").Info(), /*spec_changed=*/true);
  EXPECT_EQ(queue_.Find(Key("p")), Where::kActive);
  EXPECT_EQ(Pop().pod->requests.milli_cpu, 1) << "the newest object is scheduled";
}

TEST_F(QueueTest, UpdatesAndDeletesWhileInFlight) {
  queue_.Add(PodBuilder("updated").Info());
  queue_.Add(PodBuilder("deleted").Info());
  queue_.Add(PodBuilder("done").Info());
  QueuedPodInfo a = Pop();
  QueuedPodInfo b = Pop();
  QueuedPodInfo c = Pop();
  EXPECT_EQ(queue_.Counts().in_flight, 3u);
  queue_.Update(PodBuilder(a.pod->key.name).Req("5m").Info(), /*spec_changed=*/true);
  queue_.Delete(b.pod->key);
  EXPECT_EQ(queue_.Find(b.pod->key), Where::kInFlight);
  a.unschedulable_plugins = {kNodeResourcesFit};
  queue_.AddUnschedulableIfNotPresent(a, a.cycle, false);
  EXPECT_EQ(queue_.Find(a.pod->key), Where::kBackoff) << "updated while in flight: retried";
  queue_.AddUnschedulableIfNotPresent(b, b.cycle, false);
  EXPECT_EQ(queue_.Find(b.pod->key), Where::kNone) << "deleted while in flight: dropped";
  queue_.Done(c.pod->key);
  EXPECT_EQ(queue_.Find(c.pod->key), Where::kNone);
  EXPECT_EQ(queue_.Counts().in_flight, 0u);
  clock_.Step(seconds(1));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(Pop().pod->requests.milli_cpu, 5);
}

TEST_F(QueueTest, GatedPodsWaitForTheirGatesToGo) {
  queue_.Add(PodBuilder("g")
                 .Set("schedulingGates", boost::json::array{boost::json::object{{"name", "x"}}})
                 .Info());
  EXPECT_EQ(queue_.Find(Key("g")), Where::kGated);
  EXPECT_EQ(queue_.Counts().gated, 1u);
  queue_.MoveAllToActiveOrBackoffQueue(nullptr);
  EXPECT_EQ(queue_.Find(Key("g")), Where::kGated);
  queue_.Update(PodBuilder("g").Info(), true);
  EXPECT_EQ(queue_.Find(Key("g")), Where::kActive);
}

TEST_F(QueueTest, PopBlocksUntilAPodArrivesOrTheQueueCloses) {
  std::optional<QueuedPodInfo> got;
  std::thread t([&] { got = queue_.Pop({}); });
  queue_.Add(PodBuilder("late").Info());
  t.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->pod->key.name, "late");
  std::thread t2([&] { got = queue_.Pop({}); });
  queue_.Close();
  t2.join();
  EXPECT_FALSE(got.has_value());
}

TEST_F(QueueTest, PopReturnsWhenStopped) {
  std::stop_source stop;
  std::optional<QueuedPodInfo> got = QueuedPodInfo{};
  std::thread t([&] { got = queue_.Pop(stop.get_token()); });
  stop.request_stop();
  t.join();
  EXPECT_FALSE(got.has_value());
}

}  // namespace
}  // namespace converge::scheduler
