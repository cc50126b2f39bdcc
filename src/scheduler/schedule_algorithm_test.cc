#include "scheduler/schedule_algorithm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "scheduler/cache.h"
#include "scheduler/scheduler_test_util.h"

namespace converge::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

TEST(ScheduleAlgorithmTest, NumFeasibleNodesToFind) {
  struct Case {
    int percentage;
    int nodes;
    int want;
  };
  const Case cases[] = {
      {0, 3, 3},                          // below 100 nodes: all
      {0, 99, 99},                        //
      {0, 100, 100},                      // 50 - 0 = 50% of 100 = 50, raised to the minimum of 100
      {0, 1000, 420},                     // 50 - 8 = 42%
      {0, 5000, 500},                     // 50 - 40 = 10%
      {0, 6000, 300},                     // 50 - 48 = 2% -> 5%
      {0, 100000, 5000},                  // 5%
      {30, 1000, 300},                    // configured
      {100, 5000, 5000}, {1, 1000, 100},  // never fewer than 100
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ScheduleAlgorithm::NumFeasibleNodesToFind(c.percentage, c.nodes), c.want)
        << c.percentage << "% of " << c.nodes;
  }
}

TEST(ScheduleAlgorithmTest, FitErrorMessageIsUpstreams) {
  NodeInfo n1 = NodeBuilder("n1", "1", "1Gi").Info();
  NodeInfo n2 = NodeBuilder("n2", "1", "1Gi").Info();
  Diagnosis d;
  d.node_statuses.emplace_back(&n1, FilterStatus{Code::kUnschedulable,
                                                 kNodeResourcesFit,
                                                 {"Insufficient cpu", "Insufficient memory"}});
  d.node_statuses.emplace_back(
      &n2, FilterStatus{Code::kUnschedulable, kNodeResourcesFit, {"Insufficient cpu"}});
  d.node_statuses.emplace_back(&n2, FilterStatus{Code::kUnschedulableAndUnresolvable,
                                                 kNodeUnschedulable,
                                                 {"node(s) were unschedulable"}});
  EXPECT_EQ(FitErrorMessage(3, d),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, "
            "2 Insufficient cpu.");
  d.post_filter_message =
      "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
  EXPECT_EQ(FitErrorMessage(3, d),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, "
            "2 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims "
            "found for incoming pod..");
}

TEST(ScheduleAlgorithmTest, FitErrorSortsCountsAsText) {
  // Go's sort.Strings on "count reason": "10 ..." sorts before "2 ...".
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 12; ++i)
    nodes.push_back(NodeBuilder("n" + std::to_string(i), "1", "1Gi").Info());
  Diagnosis d;
  for (int i = 0; i < 10; ++i) {
    d.node_statuses.emplace_back(
        &nodes[i], FilterStatus{Code::kUnschedulable, kNodeResourcesFit, {"Insufficient memory"}});
  }
  for (int i = 10; i < 12; ++i) {
    d.node_statuses.emplace_back(
        &nodes[i], FilterStatus{Code::kUnschedulable, kNodeResourcesFit, {"Insufficient cpu"}});
  }
  EXPECT_EQ(FitErrorMessage(12, d),
            "0/12 nodes are available: 10 Insufficient memory, 2 Insufficient cpu.");
}

class AlgorithmFixture : public ::testing::Test {
 protected:
  void AddNode(const NodeBuilder& n) { cache_.AddOrUpdateNode(n.Facts()); }
  void AddPod(const PodBuilder& p) { cache_.AddPod(p.Info()); }
  ScheduleResult Schedule(ScheduleAlgorithm& a, const PodBuilder& p) {
    cache_.UpdateSnapshot(&snapshot_);
    return a.Schedule(*p.Info(), snapshot_);
  }
  Cache cache_;
  Snapshot snapshot_;
};

TEST_F(AlgorithmFixture, PicksTheLeastAllocatedNode) {
  AddNode(NodeBuilder("n1", "4", "8Gi"));
  AddNode(NodeBuilder("n2", "4", "8Gi"));
  AddNode(NodeBuilder("n3", "4", "8Gi"));
  AddPod(PodBuilder("a").Node("n1").Req("2", "4Gi"));
  AddPod(PodBuilder("b").Node("n3").Req("1", "2Gi"));
  ScheduleAlgorithm a({.seed = 1});
  ScheduleResult r = Schedule(a, PodBuilder("p").Req("1", "2Gi"));
  EXPECT_EQ(r.suggested_host, "n2");
  EXPECT_EQ(r.evaluated_nodes, 3);
  EXPECT_EQ(r.feasible_nodes, 3);
}

TEST_F(AlgorithmFixture, OnlyFeasibleNodesAreChosen) {
  AddNode(NodeBuilder("small", "1", "1Gi"));
  AddNode(NodeBuilder("tainted", "8", "8Gi").Taint("dedicated", "x", "NoSchedule"));
  AddNode(NodeBuilder("big", "8", "8Gi"));
  ScheduleAlgorithm a({.seed = 1});
  for (int i = 0; i < 5; ++i) {
    ScheduleResult r = Schedule(a, PodBuilder("p").Req("2"));
    EXPECT_EQ(r.suggested_host, "big");
    EXPECT_EQ(r.feasible_nodes, 1);
  }
}

TEST_F(AlgorithmFixture, TiesAreBrokenAtRandomAcrossEveryTiedNode) {
  for (int i = 0; i < 4; ++i) AddNode(NodeBuilder("n" + std::to_string(i), "4", "8Gi"));
  ScheduleAlgorithm a({.seed = 42});
  std::map<std::string, int> picks;
  for (int i = 0; i < 400; ++i)
    ++picks[Schedule(a, PodBuilder("p").Req("1", "1Gi")).suggested_host];
  ASSERT_EQ(picks.size(), 4u);
  for (const auto& [node, n] : picks) EXPECT_GT(n, 40) << node;
}

TEST_F(AlgorithmFixture, PreferNoScheduleTaintsAndPreferredAffinitySteer) {
  AddNode(NodeBuilder("soft-tainted", "4", "8Gi").Taint("spot", "true", "PreferNoSchedule"));
  AddNode(NodeBuilder("plain", "4", "8Gi"));
  ScheduleAlgorithm a({.seed = 3});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Schedule(a, PodBuilder("p")).suggested_host, "plain");

  cache_.RemoveNode("soft-tainted");
  cache_.RemoveNode("plain");
  AddNode(NodeBuilder("zone-a", "4", "8Gi").Label("zone", "a"));
  AddNode(NodeBuilder("zone-b", "4", "8Gi").Label("zone", "b"));
  boost::json::array pref{boost::json::object{
      {"weight", 50},
      {"preference",
       boost::json::object{
           {"matchExpressions",
            boost::json::array{boost::json::object{
                {"key", "zone"}, {"operator", "In"}, {"values", boost::json::array{"b"}}}}}}}}};
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Schedule(a, PodBuilder("p").PreferredAffinity(pref)).suggested_host, "zone-b");
  }
}

TEST_F(AlgorithmFixture, DiagnosisWhenNothingFits) {
  AddNode(NodeBuilder("n1", "1", "1Gi"));
  AddNode(NodeBuilder("n2", "1", "1Gi").Unschedulable());
  AddNode(NodeBuilder("n3", "2", "1Gi"));
  ScheduleAlgorithm a({.seed = 1});
  ScheduleResult r = Schedule(a, PodBuilder("p").Req("3"));
  EXPECT_TRUE(r.suggested_host.empty());
  EXPECT_EQ(r.evaluated_nodes, 3);
  EXPECT_EQ(r.diagnosis.node_statuses.size(), 3u);
  EXPECT_EQ(FitErrorMessage(3, r.diagnosis),
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu.");
  std::vector<std::string_view> plugins = r.diagnosis.unschedulable_plugins;
  std::sort(plugins.begin(), plugins.end());
  EXPECT_EQ(plugins, (std::vector<std::string_view>{kNodeResourcesFit, kNodeUnschedulable}));
}

TEST_F(AlgorithmFixture, LargeClustersFilterOnlyASampleAndRotateTheStart) {
  for (int i = 0; i < 1000; ++i) AddNode(NodeBuilder("n" + std::to_string(i), "4", "8Gi"));
  ScheduleAlgorithm a({.seed = 1});
  ScheduleResult first = Schedule(a, PodBuilder("p").Req("1"));
  EXPECT_EQ(first.evaluated_nodes, 420);
  EXPECT_EQ(first.feasible_nodes, 420);
  // The next cycle starts where this one stopped: nodes 420.. are evaluated, so the choice
  // comes from there (all nodes tie on an empty cluster).
  ScheduleResult second = Schedule(a, PodBuilder("q").Req("1"));
  int index = std::stoi(second.suggested_host.substr(1));
  EXPECT_GE(index, 420);
  EXPECT_LT(index, 840);
}

}  // namespace
}  // namespace converge::scheduler
