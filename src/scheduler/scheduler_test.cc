// The scheduler's whole sync — informer events in, bindings, status patches and events out —
// driven through fakes: a recording SchedulerClient and a recording event sink, a FakeClock, and
// bindings on the calling thread.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>

#include "client/api_errors.h"
#include "scheduler/scheduler_test_util.h"

namespace converge::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;
namespace json = boost::json;

class RecordingSchedulerClient final : public SchedulerClient {
 public:
  util::Status Bind(const PodInfo& pod, const std::string& node) override {
    std::lock_guard lock(mu_);
    if (bind_error_) return *bind_error_;
    binds_.emplace_back(pod.key.name, node);
    return util::Status();
  }
  util::Status PatchPodStatus(const PodInfo& pod, const std::string& patch) override {
    std::lock_guard lock(mu_);
    patches_.emplace_back(pod.key.name, json::parse(patch).as_object());
    return util::Status();
  }
  util::Status EvictVictim(const PodInfo& victim, std::string_view message) override {
    std::lock_guard lock(mu_);
    evicted_.emplace_back(victim.key.name, std::string(message));
    return util::Status();
  }

  std::vector<std::pair<std::string, std::string>> binds() const {
    std::lock_guard lock(mu_);
    return binds_;
  }
  std::vector<std::pair<std::string, json::object>> patches() const {
    std::lock_guard lock(mu_);
    return patches_;
  }
  std::vector<std::pair<std::string, std::string>> evicted() const {
    std::lock_guard lock(mu_);
    return evicted_;
  }
  void FailBinds(std::optional<util::Status> s) {
    std::lock_guard lock(mu_);
    bind_error_ = std::move(s);
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> binds_;
  std::vector<std::pair<std::string, json::object>> patches_;
  std::vector<std::pair<std::string, std::string>> evicted_;
  std::optional<util::Status> bind_error_;
};

class RecordingEventSink final : public client::EventSink {
 public:
  util::StatusOr<api::Object> Create(const api::Object& event) override {
    std::lock_guard lock(mu_);
    events_.push_back(event);
    return event;
  }
  util::StatusOr<api::Object> Patch(const api::Object& event, std::string_view) override {
    return event;
  }
  // "<reason>: <message>" for events about pod `name`.
  std::vector<std::string> About(const std::string& name) const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const api::Object& e : events_) {
      if (api::FindString(e.doc(), {"involvedObject", "name"}) == name) {
        out.push_back(std::string(api::FindString(e.doc(), {"reason"})) + ": " +
                      std::string(api::FindString(e.doc(), {"message"})));
      }
    }
    return out;
  }
  std::vector<api::Object> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<api::Object> events_;
};

class SchedulerSyncTest : public ::testing::Test {
 protected:
  SchedulerSyncTest() {
    SchedulerOptions o;
    o.clock = &clock_;
    o.metrics = &registry_;
    o.bind_workers = 0;
    o.seed = 7;
    o.leader_elect = false;
    o.api = &api_;
    o.event_sink = &sink_;
    scheduler_ = std::make_unique<Scheduler>(o);
  }

  void AddNode(const NodeBuilder& n) { scheduler_->OnNodeAdd(n.Object()); }
  void AddPod(const PodBuilder& p) { scheduler_->OnPodAdd(p.Object()); }
  // Runs one cycle; the queue must have an active pod.
  void ScheduleOne() {
    ASSERT_GT(scheduler_->queue().Counts().active, 0u);
    ASSERT_TRUE(scheduler_->ScheduleOne({}));
  }
  std::vector<std::string> Events(const std::string& pod) {
    scheduler_->recorder().Flush();
    return sink_.About(pod);
  }
  double Metric(const std::string& line) {
    std::string text = registry_.Render();
    size_t at = text.find(line + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + line.size() + 1));
  }

  util::FakeClock clock_;
  util::Registry registry_;
  RecordingSchedulerClient api_;
  RecordingEventSink sink_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerSyncTest, ThreePodsSpreadOverThreeNodes) {
  for (const char* n : {"node-1", "node-2", "node-3"}) AddNode(NodeBuilder(n, "4", "8Gi"));
  for (const char* p : {"web-1", "web-2", "web-3"}) AddPod(PodBuilder(p).Req("1", "1Gi"));
  for (int i = 0; i < 3; ++i) ScheduleOne();
  std::vector<std::pair<std::string, std::string>> binds = api_.binds();
  ASSERT_EQ(binds.size(), 3u);
  std::set<std::string> nodes;
  for (const auto& [pod, node] : binds) nodes.insert(node);
  EXPECT_EQ(nodes.size(), 3u) << "least-allocated puts each pod on an empty node";
  for (const auto& [pod, node] : binds) {
    EXPECT_EQ(Events(pod), std::vector<std::string>{"Scheduled: Successfully assigned default/" +
                                                    pod + " to " + node});
    EXPECT_TRUE(scheduler_->cache().IsAssumed({"default", pod}));
  }
  EXPECT_EQ(
      Metric(
          "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-scheduler\"}"),
      3);
  // The informer then sees the bindings: the assumed pods are confirmed, the queue is empty.
  for (const auto& [pod, node] : binds) {
    scheduler_->OnPodUpdate(
        PodBuilder(pod).Req("1", "1Gi").Object(),
        PodBuilder(pod).Req("1", "1Gi").Node(node).ResourceVersion("2").Object());
    EXPECT_FALSE(scheduler_->cache().IsAssumed({"default", pod}));
  }
  EXPECT_EQ(scheduler_->cache().NumPods(), 3u);
  QueueCounts c = scheduler_->queue().Counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable + c.in_flight, 0u);
}

TEST_F(SchedulerSyncTest, AssumedPodsCountBeforeTheirBindingIsSeen) {
  AddNode(NodeBuilder("only", "2", "8Gi"));
  AddPod(PodBuilder("a").Req("1500m"));
  AddPod(PodBuilder("b").Req("1"));
  ScheduleOne();
  ScheduleOne();
  ASSERT_EQ(api_.binds().size(), 1u) << "b must not be bound on top of the assumed a";
  EXPECT_EQ(scheduler_->queue().Find({"default", "b"}), SchedulingQueue::Where::kUnschedulable);
}

TEST_F(SchedulerSyncTest, TooBigThenABigNodeAppears) {
  for (const char* n : {"node-1", "node-2", "node-3"}) AddNode(NodeBuilder(n, "2", "4Gi"));
  AddPod(PodBuilder("huge").Req("3"));
  ScheduleOne();
  EXPECT_TRUE(api_.binds().empty());
  const std::string message =
      "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No "
      "preemption victims found for incoming pod..";
  EXPECT_EQ(Events("huge"), std::vector<std::string>{"FailedScheduling: " + message});
  std::vector<std::pair<std::string, json::object>> patches = api_.patches();
  ASSERT_EQ(patches.size(), 1u);
  const json::object& cond =
      patches[0].second.at("status").at("conditions").as_array()[0].as_object();
  EXPECT_EQ(cond.at("type"), "PodScheduled");
  EXPECT_EQ(cond.at("status"), "False");
  EXPECT_EQ(cond.at("reason"), "Unschedulable");
  EXPECT_EQ(cond.at("message").as_string(), message);
  EXPECT_EQ(patches[0].second.at("metadata").at("uid"), "uid-huge");
  EXPECT_EQ(scheduler_->queue().Find({"default", "huge"}), SchedulingQueue::Where::kUnschedulable);
  EXPECT_EQ(Metric("scheduler_pending_pods{queue=\"unschedulable\"}"), 1);

  // A node too small does not release it; a big one does.
  AddNode(NodeBuilder("node-4", "1", "4Gi"));
  EXPECT_EQ(scheduler_->queue().Find({"default", "huge"}), SchedulingQueue::Where::kUnschedulable);
  AddNode(NodeBuilder("big", "8", "16Gi"));
  EXPECT_EQ(scheduler_->queue().Find({"default", "huge"}), SchedulingQueue::Where::kBackoff);
  clock_.Step(std::chrono::seconds(1));
  scheduler_->queue().FlushBackoffQCompleted();
  ScheduleOne();
  ASSERT_EQ(api_.binds().size(), 1u);
  EXPECT_EQ(api_.binds()[0], (std::pair<std::string, std::string>{"huge", "big"}));
}

TEST_F(SchedulerSyncTest, NoNodes) {
  AddPod(PodBuilder("p"));
  ScheduleOne();
  EXPECT_EQ(Events("p"),
            std::vector<std::string>{"FailedScheduling: no nodes available to schedule pods"});
  // No plugin rejected it, so it retries after its backoff rather than waiting for an event.
  EXPECT_EQ(scheduler_->queue().Find({"default", "p"}), SchedulingQueue::Where::kBackoff);
}

TEST_F(SchedulerSyncTest, NodeSelectorAndTaints) {
  AddNode(NodeBuilder("ssd", "4", "8Gi").Label("disktype", "ssd"));
  AddNode(NodeBuilder("gpu", "4", "8Gi").Taint("dedicated", "gpu", "NoSchedule"));
  AddNode(NodeBuilder("plain", "4", "8Gi"));
  AddPod(PodBuilder("wants-ssd").NodeSelector({{"disktype", "ssd"}}));
  ScheduleOne();
  AddPod(PodBuilder("tolerates-gpu")
             .NodeSelector({{"kubernetes.io/hostname", "gpu"}})
             .Tolerations({json::object{{"key", "dedicated"},
                                        {"operator", "Equal"},
                                        {"value", "gpu"},
                                        {"effect", "NoSchedule"}}}));
  ScheduleOne();
  AddPod(PodBuilder("wants-gpu-untolerated").NodeSelector({{"kubernetes.io/hostname", "gpu"}}));
  ScheduleOne();
  std::vector<std::pair<std::string, std::string>> binds = api_.binds();
  std::map<std::string, std::string> bound(binds.begin(), binds.end());
  EXPECT_EQ(bound["wants-ssd"], "ssd");
  EXPECT_EQ(bound["tolerates-gpu"], "gpu");
  EXPECT_FALSE(bound.contains("wants-gpu-untolerated"));
  EXPECT_EQ(Events("wants-gpu-untolerated"),
            std::vector<std::string>{
                "FailedScheduling: 0/3 nodes are available: 1 node(s) had untolerated taint "
                "{dedicated: gpu}, 2 node(s) didn't match Pod's node affinity/selector. "
                "preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
                "scheduling.."});
}

TEST_F(SchedulerSyncTest, AFailedBindingIsForgottenAndRetried) {
  AddNode(NodeBuilder("n1", "4", "8Gi"));
  AddPod(PodBuilder("p").Req("1"));
  api_.FailBinds(util::Unavailable("connection refused"));
  ScheduleOne();
  EXPECT_FALSE(scheduler_->cache().IsAssumed({"default", "p"}));
  EXPECT_EQ(scheduler_->cache().GetNodeInfo("n1")->requested.milli_cpu, 0);
  EXPECT_EQ(scheduler_->queue().Find({"default", "p"}), SchedulingQueue::Where::kBackoff);
  EXPECT_EQ(Events("p"), std::vector<std::string>{"FailedScheduling: connection refused"});
  EXPECT_EQ(api_.patches().size(), 1u);
  EXPECT_EQ(api_.patches()[0].second.at("status").at("conditions").as_array()[0].at("reason"),
            "SchedulerError");
  api_.FailBinds(std::nullopt);
  clock_.Step(std::chrono::seconds(1));
  scheduler_->queue().FlushBackoffQCompleted();
  ScheduleOne();
  EXPECT_EQ(api_.binds().size(), 1u);
}

TEST_F(SchedulerSyncTest, ABindingToADeletedPodIsDropped) {
  AddNode(NodeBuilder("n1", "4", "8Gi"));
  AddPod(PodBuilder("p"));
  api_.FailBinds(util::NotFound("pods \"p\" not found").WithReason("NotFound"));
  ScheduleOne();
  EXPECT_EQ(scheduler_->queue().Find({"default", "p"}), SchedulingQueue::Where::kNone);
  EXPECT_TRUE(api_.patches().empty());
}

TEST_F(SchedulerSyncTest, OtherSchedulersPodsAndBoundPods) {
  AddNode(NodeBuilder("n1", "4", "8Gi"));
  AddPod(PodBuilder("other").SchedulerName("my-scheduler"));
  AddPod(PodBuilder("bound").Node("n1").Req("3"));
  QueueCounts c = scheduler_->queue().Counts();
  EXPECT_EQ(c.active, 0u);
  EXPECT_EQ(scheduler_->cache().GetNodeInfo("n1")->requested.milli_cpu, 3000);
  // Deleting the bound pod frees the node for a pod that waited for cpu.
  AddPod(PodBuilder("waits").Req("2"));
  ScheduleOne();
  EXPECT_EQ(scheduler_->queue().Find({"default", "waits"}), SchedulingQueue::Where::kUnschedulable);
  scheduler_->OnPodDelete({"default", "bound"}, PodBuilder("bound").Node("n1").Object());
  EXPECT_EQ(scheduler_->queue().Find({"default", "waits"}), SchedulingQueue::Where::kBackoff);
}

TEST_F(SchedulerSyncTest, StatusOnlyUpdatesDoNotReleaseAnUnschedulablePod) {
  AddNode(NodeBuilder("n1", "1", "8Gi"));
  AddPod(PodBuilder("p").Req("2"));
  ScheduleOne();
  // Our own PodScheduled=False patch comes back through the informer.
  scheduler_->OnPodUpdate(PodBuilder("p").Req("2").Object(),
                          PodBuilder("p").Req("2").ResourceVersion("2").Object());
  EXPECT_EQ(scheduler_->queue().Find({"default", "p"}), SchedulingQueue::Where::kUnschedulable);
  // The user lowers the request: retried.
  scheduler_->OnPodUpdate(PodBuilder("p").Req("2").ResourceVersion("2").Object(),
                          PodBuilder("p").Req("500m").ResourceVersion("3").Object());
  EXPECT_NE(scheduler_->queue().Find({"default", "p"}), SchedulingQueue::Where::kUnschedulable);
}

TEST_F(SchedulerSyncTest, HeartbeatsDoNotTouchTheCache) {
  NodeBuilder n("n1", "4", "8Gi");
  AddNode(n);
  NodeFacts a = *n.Facts();
  NodeFacts b = *NodeBuilder("n1", "4", "8Gi").ResourceVersion("2").Facts();
  EXPECT_FALSE(NodeSchedulingPropertiesChanged(a, b));
  EXPECT_TRUE(NodeSchedulingPropertiesChanged(a, *NodeBuilder("n1", "8", "8Gi").Facts()));
  EXPECT_TRUE(
      NodeSchedulingPropertiesChanged(a, *NodeBuilder("n1", "4", "8Gi").Label("x", "y").Facts()));
  EXPECT_TRUE(
      NodeSchedulingPropertiesChanged(a, *NodeBuilder("n1", "4", "8Gi").Unschedulable().Facts()));
  EXPECT_TRUE(NodeSchedulingPropertiesChanged(
      a, *NodeBuilder("n1", "4", "8Gi").Taint("k", "v", "NoSchedule").Facts()));
}

TEST_F(SchedulerSyncTest, PreemptionEvictsLowerPriorityPodsAndNominatesTheNode) {
  AddNode(NodeBuilder("n1", "2", "8Gi"));
  AddPod(PodBuilder("low").Node("n1").Req("2").Priority(0));
  AddPod(PodBuilder("important").Req("1").Priority(1000));
  ScheduleOne();
  EXPECT_TRUE(api_.binds().empty());
  ASSERT_EQ(api_.evicted().size(), 1u);
  EXPECT_EQ(api_.evicted()[0].first, "low");
  EXPECT_EQ(api_.evicted()[0].second,
            "default-scheduler: preempting to accommodate a higher priority pod");
  ASSERT_EQ(api_.patches().size(), 1u);
  EXPECT_EQ(api_.patches()[0].second.at("status").at("nominatedNodeName"), "n1");
  EXPECT_EQ(
      Events("important"),
      std::vector<std::string>{"FailedScheduling: 0/1 nodes are available: 1 Insufficient cpu."});
  EXPECT_EQ(Events("low"),
            std::vector<std::string>{"Preempted: Preempted by pod uid-important on node n1"});
  // The victim's deletion releases the preemptor, which then lands on n1.
  scheduler_->OnPodDelete({"default", "low"}, PodBuilder("low").Node("n1").Object());
  clock_.Step(std::chrono::seconds(1));
  scheduler_->queue().FlushBackoffQCompleted();
  ScheduleOne();
  ASSERT_EQ(api_.binds().size(), 1u);
  EXPECT_EQ(api_.binds()[0].second, "n1");
}

TEST(PodSpecChangedTest, IgnoresStatusAndBookkeeping) {
  api::Object a = *PodBuilder("p").Object();
  api::Object b = a;
  b.set_resource_version("9");
  b.mutable_doc()["status"] = json::object{{"phase", "Pending"}};
  EXPECT_FALSE(PodSpecChanged(a, b));
  b.SetLabel("app", "web");
  EXPECT_TRUE(PodSpecChanged(a, b));
  api::Object c = a;
  c.mutable_doc()["spec"].as_object()["priority"] = 5;
  EXPECT_TRUE(PodSpecChanged(a, c));
}

}  // namespace
}  // namespace converge::scheduler
