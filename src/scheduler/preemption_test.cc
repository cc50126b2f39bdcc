#include "scheduler/preemption.h"

#include <gtest/gtest.h>

#include "scheduler/cache.h"
#include "scheduler/scheduler_test_util.h"

namespace converge::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

class PreemptionTest : public ::testing::Test {
 protected:
  // Runs the algorithm (which must find no node) and then preemption.
  PreemptionResult Run(const PodBuilder& pod) {
    cache_.UpdateSnapshot(&snapshot_);
    PodInfoPtr info = pod.Info();
    ScheduleAlgorithm a({.seed = 1});
    ScheduleResult r = a.Schedule(*info, snapshot_);
    EXPECT_TRUE(r.suggested_host.empty());
    diagnosis_ = r.diagnosis;
    return Preempt(*info, snapshot_, diagnosis_);
  }
  Cache cache_;
  Snapshot snapshot_;
  Diagnosis diagnosis_;
};

TEST_F(PreemptionTest, NoVictimsWhenNothingHasLowerPriority) {
  for (const char* n : {"n1", "n2", "n3"})
    cache_.AddOrUpdateNode(NodeBuilder(n, "1", "1Gi").Facts());
  PreemptionResult r = Run(PodBuilder("big").Req("2"));
  EXPECT_TRUE(r.nominated_node.empty());
  EXPECT_EQ(r.message,
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.");
  diagnosis_.post_filter_message = r.message;
  // The whole event message, as kubectl describe shows it upstream (note the double period).
  EXPECT_EQ(FitErrorMessage(3, diagnosis_),
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 "
            "No preemption victims found for incoming pod..");
}

TEST_F(PreemptionTest, UnresolvableNodesAreNotHelpful) {
  cache_.AddOrUpdateNode(NodeBuilder("cordoned", "8", "8Gi").Unschedulable().Facts());
  cache_.AddOrUpdateNode(NodeBuilder("small", "1", "1Gi").Facts());
  PreemptionResult r = Run(PodBuilder("p").Req("2"));
  EXPECT_EQ(r.message,
            "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming "
            "pod, 1 Preemption is not helpful for scheduling.");
}

TEST_F(PreemptionTest, VictimsThatWouldNotMakeRoomReportTheFilter) {
  cache_.AddOrUpdateNode(NodeBuilder("n1", "2", "1Gi").Facts());
  cache_.AddPod(PodBuilder("low").Node("n1").Req("1").Priority(0).Info());
  PreemptionResult r = Run(PodBuilder("huge").Req("3").Priority(100));
  EXPECT_EQ(r.message, "preemption: 0/1 nodes are available: 1 Insufficient cpu.");
}

TEST_F(PreemptionTest, PicksTheNodeWithTheLeastImportantVictimsAndReprieves) {
  cache_.AddOrUpdateNode(NodeBuilder("n1", "2", "4Gi").Facts());
  cache_.AddOrUpdateNode(NodeBuilder("n2", "2", "4Gi").Facts());
  cache_.AddPod(PodBuilder("n1-mid").Node("n1").Req("1").Priority(50).Info());
  cache_.AddPod(PodBuilder("n1-low").Node("n1").Req("1").Priority(10).Info());
  cache_.AddPod(PodBuilder("n2-high").Node("n2").Req("1").Priority(90).Info());
  cache_.AddPod(PodBuilder("n2-mid").Node("n2").Req("1").Priority(50).Info());
  // Needs one cpu: on n1, evicting n1-low (10) suffices, n1-mid is reprieved; on n2 the victim
  // would be n2-mid (50). The lowest highest-victim priority wins.
  PreemptionResult r = Run(PodBuilder("p").Req("1").Priority(100));
  EXPECT_TRUE(r.message.empty());
  EXPECT_EQ(r.nominated_node, "n1");
  ASSERT_EQ(r.victims.size(), 1u);
  EXPECT_EQ(r.victims[0]->key.name, "n1-low");
}

TEST_F(PreemptionTest, PreemptionPolicyNever) {
  cache_.AddOrUpdateNode(NodeBuilder("n1", "1", "1Gi").Facts());
  cache_.AddPod(PodBuilder("low").Node("n1").Req("1").Info());
  PreemptionResult r = Run(PodBuilder("p").Req("1").Priority(100).Set("preemptionPolicy", "Never"));
  EXPECT_TRUE(r.nominated_node.empty());
  EXPECT_EQ(r.message, "preemption: not eligible due to preemptionPolicy=Never.");
}

TEST_F(PreemptionTest, WaitsForTerminatingVictimsOnTheNominatedNode) {
  cache_.AddOrUpdateNode(NodeBuilder("n1", "1", "1Gi").Facts());
  cache_.AddPod(PodBuilder("victim").Node("n1").Req("1").Deleting().Info());
  PodBuilder pod = PodBuilder("p").Req("1").Priority(100);
  boost::json::object doc = pod.Object()->doc();
  doc["status"] = boost::json::object{{"nominatedNodeName", "n1"}};
  PodInfoPtr info = NewPodInfo(std::make_shared<const api::Object>(doc));
  cache_.UpdateSnapshot(&snapshot_);
  ScheduleAlgorithm a({.seed = 1});
  ScheduleResult sr = a.Schedule(*info, snapshot_);
  PreemptionResult r = Preempt(*info, snapshot_, sr.diagnosis);
  EXPECT_TRUE(r.nominated_node.empty());
  EXPECT_EQ(r.message, "preemption: not eligible due to a terminating pod on the nominated node.");
}

}  // namespace
}  // namespace converge::scheduler
