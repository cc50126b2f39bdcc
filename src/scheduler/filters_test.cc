#include "scheduler/filters.h"

#include <gtest/gtest.h>

#include "scheduler/scheduler_test_util.h"

namespace converge::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;
namespace json = boost::json;

struct FilterCase {
  std::string name;
  PodBuilder pod;
  NodeInfo node;
  Code code;
  std::vector<std::string> reasons;
};

void Check(FilterStatus (*filter)(const PodInfo&, const NodeInfo&), std::string_view plugin,
           const std::vector<FilterCase>& cases) {
  for (const FilterCase& c : cases) {
    FilterStatus s = filter(*c.pod.Info(), c.node);
    EXPECT_EQ(s.code, c.code) << c.name;
    EXPECT_EQ(s.reasons, c.reasons) << c.name;
    if (!s.ok()) {
      EXPECT_EQ(s.plugin, plugin) << c.name;
    }
  }
}

json::object Toleration(std::string key, std::string op, std::string value, std::string effect) {
  json::object t{{"key", key}, {"operator", op}};
  if (!value.empty()) t["value"] = value;
  if (!effect.empty()) t["effect"] = effect;
  return t;
}

TEST(FiltersTest, NodeResourcesFit) {
  NodeBuilder node("n1", "2", "4Gi", "3");
  PodInfoPtr used_1cpu = PodBuilder("u1").Node("n1").Req("1", "1Gi").Info();
  PodInfoPtr used_small = PodBuilder("u2").Node("n1").Req("100m", "100Mi").Info();
  std::vector<FilterCase> cases = {
      {"fits an empty node", PodBuilder("p").Req("1", "1Gi"), node.Info(), Code::kSuccess, {}},
      {"fits exactly", PodBuilder("p").Req("2", "4Gi"), node.Info(), Code::kSuccess, {}},
      {"fits next to another pod",
       PodBuilder("p").Req("1", "3Gi"),
       node.Info({used_1cpu}),
       Code::kSuccess,
       {}},
      {"too much cpu",
       PodBuilder("p").Req("1500m"),
       node.Info({used_1cpu}),
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"too much memory",
       PodBuilder("p").Req("", "3500Mi"),
       node.Info({used_1cpu}),
       Code::kUnschedulable,
       {"Insufficient memory"}},
      {"both, in upstream's order",
       PodBuilder("p").Req("3", "5Gi"),
       node.Info(),
       Code::kUnschedulable,
       {"Insufficient cpu", "Insufficient memory"}},
      {"pod count",
       PodBuilder("p"),
       node.Info({used_small, used_small, used_small}),
       Code::kUnschedulable,
       {"Too many pods"}},
      {"pod count and cpu",
       PodBuilder("p").Req("2"),
       node.Info({used_small, used_small, used_1cpu}),
       Code::kUnschedulable,
       {"Too many pods", "Insufficient cpu"}},
      {"no requests fit an overcommitted node",
       PodBuilder("p"),
       NodeBuilder("n1", "500m", "4Gi").Info({used_1cpu}),
       Code::kSuccess,
       {}},
      {"init containers count",
       PodBuilder("p").Req("100m").AddInit({{"cpu", "3"}}),
       node.Info(),
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"overhead counts",
       PodBuilder("p").Req("2").Set("overhead", json::object{{"cpu", "1m"}}),
       node.Info(),
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"ephemeral storage",
       PodBuilder("p").AddContainer({{"ephemeral-storage", "1Gi"}}),
       NodeBuilder("n1", "2", "4Gi").Allocatable("ephemeral-storage", "512Mi").Info(),
       Code::kUnschedulable,
       {"Insufficient ephemeral-storage"}},
      {"extended resource missing on the node",
       PodBuilder("p").AddContainer({{"example.com/gpu", "1"}}),
       node.Info(),
       Code::kUnschedulable,
       {"Insufficient example.com/gpu"}},
      {"extended resource present",
       PodBuilder("p").AddContainer({{"example.com/gpu", "1"}}),
       NodeBuilder("n1", "2", "4Gi").Allocatable("example.com/gpu", "2").Info(),
       Code::kSuccess,
       {}},
  };
  Check(&FilterNodeResourcesFit, kNodeResourcesFit, cases);
}

TEST(FiltersTest, FitsRequestReportsUsage) {
  NodeBuilder node("n1", "2", "4Gi");
  PodInfoPtr used = PodBuilder("u").Node("n1").Req("1500m").Info();
  std::vector<InsufficientResource> r =
      FitsRequest(PodBuilder("p").Req("1").Info()->requests, node.Info({used}));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].resource, "cpu");
  EXPECT_EQ(r[0].requested, 1000);
  EXPECT_EQ(r[0].used, 1500);
  EXPECT_EQ(r[0].capacity, 2000);
}

TEST(FiltersTest, NodeName) {
  NodeBuilder node("n1", "1", "1Gi");
  std::vector<FilterCase> cases = {
      {"no node name", PodBuilder("p"), node.Info(), Code::kSuccess, {}},
      {"this node", PodBuilder("p").Node("n1"), node.Info(), Code::kSuccess, {}},
      {"another node",
       PodBuilder("p").Node("n2"),
       node.Info(),
       Code::kUnschedulableAndUnresolvable,
       {"node(s) didn't match the requested node name"}},
  };
  Check(&FilterNodeName, kNodeName, cases);
}

TEST(FiltersTest, NodeUnschedulable) {
  NodeBuilder cordoned = NodeBuilder("n1", "1", "1Gi").Unschedulable();
  std::vector<FilterCase> cases = {
      {"schedulable node",
       PodBuilder("p"),
       NodeBuilder("n1", "1", "1Gi").Info(),
       Code::kSuccess,
       {}},
      {"cordoned node",
       PodBuilder("p"),
       cordoned.Info(),
       Code::kUnschedulableAndUnresolvable,
       {"node(s) were unschedulable"}},
      {"tolerated",
       PodBuilder("p").Tolerations(
           {Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")}),
       cordoned.Info(),
       Code::kSuccess,
       {}},
      {"tolerated by a wildcard",
       PodBuilder("p").Tolerations({Toleration("", "Exists", "", "")}),
       cordoned.Info(),
       Code::kSuccess,
       {}},
      {"a NoExecute toleration does not count",
       PodBuilder("p").Tolerations(
           {Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoExecute")}),
       cordoned.Info(),
       Code::kUnschedulableAndUnresolvable,
       {"node(s) were unschedulable"}},
  };
  Check(&FilterNodeUnschedulable, kNodeUnschedulable, cases);
}

TEST(FiltersTest, TaintToleration) {
  NodeBuilder gpu = NodeBuilder("n1", "1", "1Gi").Taint("dedicated", "gpu", "NoSchedule");
  NodeBuilder not_ready =
      NodeBuilder("n1", "1", "1Gi").Taint("node.kubernetes.io/not-ready", "", "NoSchedule");
  NodeBuilder unreachable =
      NodeBuilder("n1", "1", "1Gi").Taint("node.kubernetes.io/unreachable", "", "NoExecute");
  // What the DefaultTolerationSeconds admission plugin adds to every pod.
  json::array default_tolerations{
      Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute"),
      Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute")};
  std::vector<FilterCase> cases = {
      {"no taints", PodBuilder("p"), NodeBuilder("n1", "1", "1Gi").Info(), Code::kSuccess, {}},
      {"untolerated taint",
       PodBuilder("p"),
       gpu.Info(),
       Code::kUnschedulableAndUnresolvable,
       {"node(s) had untolerated taint {dedicated: gpu}"}},
      {"tolerated taint",
       PodBuilder("p").Tolerations({Toleration("dedicated", "Equal", "gpu", "NoSchedule")}),
       gpu.Info(),
       Code::kSuccess,
       {}},
      {"toleration for another value",
       PodBuilder("p").Tolerations({Toleration("dedicated", "Equal", "tpu", "NoSchedule")}),
       gpu.Info(),
       Code::kUnschedulableAndUnresolvable,
       {"node(s) had untolerated taint {dedicated: gpu}"}},
      {"PreferNoSchedule only scores",
       PodBuilder("p"),
       NodeBuilder("n1", "1", "1Gi").Taint("soft", "x", "PreferNoSchedule").Info(),
       Code::kSuccess,
       {}},
      {"not-ready node",
       PodBuilder("p").Tolerations(default_tolerations),
       not_ready.Info(),
       Code::kUnschedulableAndUnresolvable,
       {"node(s) had untolerated taint {node.kubernetes.io/not-ready: }"}},
      {"unreachable node tolerated for eviction, so schedulable",
       PodBuilder("p").Tolerations(default_tolerations),
       unreachable.Info(),
       Code::kSuccess,
       {}},
      {"unreachable node without tolerations",
       PodBuilder("p"),
       unreachable.Info(),
       Code::kUnschedulableAndUnresolvable,
       {"node(s) had untolerated taint {node.kubernetes.io/unreachable: }"}},
  };
  Check(&FilterTaintToleration, kTaintToleration, cases);
}

TEST(FiltersTest, NodeAffinity) {
  NodeBuilder node = NodeBuilder("n1", "1", "1Gi").Label("disktype", "ssd").Label("cores", "8");
  auto term = [](json::array exprs) { return json::object{{"matchExpressions", exprs}}; };
  auto req = [](std::string k, std::string op, json::array v) {
    json::object r{{"key", k}, {"operator", op}};
    if (!v.empty()) r["values"] = v;
    return r;
  };
  const std::string kReason = "node(s) didn't match Pod's node affinity/selector";
  std::vector<FilterCase> cases = {
      {"no constraints", PodBuilder("p"), node.Info(), Code::kSuccess, {}},
      {"nodeSelector matches",
       PodBuilder("p").NodeSelector({{"disktype", "ssd"}}),
       node.Info(),
       Code::kSuccess,
       {}},
      {"nodeSelector misses",
       PodBuilder("p").NodeSelector({{"disktype", "hdd"}}),
       node.Info(),
       Code::kUnschedulableAndUnresolvable,
       {kReason}},
      {"nodeSelector on a missing label",
       PodBuilder("p").NodeSelector({{"gpu", "true"}}),
       node.Info(),
       Code::kUnschedulableAndUnresolvable,
       {kReason}},
      {"affinity In",
       PodBuilder("p").RequiredAffinity({term({req("disktype", "In", {"ssd"})})}),
       node.Info(),
       Code::kSuccess,
       {}},
      {"affinity Gt",
       PodBuilder("p").RequiredAffinity({term({req("cores", "Gt", {"4"})})}),
       node.Info(),
       Code::kSuccess,
       {}},
      {"affinity Lt misses",
       PodBuilder("p").RequiredAffinity({term({req("cores", "Lt", {"4"})})}),
       node.Info(),
       Code::kUnschedulableAndUnresolvable,
       {kReason}},
      {"affinity DoesNotExist",
       PodBuilder("p").RequiredAffinity({term({req("gpu", "DoesNotExist", {})})}),
       node.Info(),
       Code::kSuccess,
       {}},
      {"second term matches",
       PodBuilder("p").RequiredAffinity(
           {term({req("disktype", "In", {"hdd"})}), term({req("cores", "Exists", {})})}),
       node.Info(),
       Code::kSuccess,
       {}},
      {"metadata.name field",
       PodBuilder("p").RequiredAffinity({json::object{
           {"matchFields",
            json::array{json::object{
                {"key", "metadata.name"}, {"operator", "In"}, {"values", json::array{"n2"}}}}}}}),
       node.Info(),
       Code::kUnschedulableAndUnresolvable,
       {kReason}},
      {"selector and affinity must both match",
       PodBuilder("p")
           .NodeSelector({{"disktype", "ssd"}})
           .RequiredAffinity({term({req("cores", "NotIn", {"8"})})}),
       node.Info(),
       Code::kUnschedulableAndUnresolvable,
       {kReason}},
  };
  Check(&FilterNodeAffinity, kNodeAffinity, cases);
}

TEST(FiltersTest, RunFiltersStopsAtTheFirstRejectionInUpstreamOrder) {
  // Cordoned, tainted and too small: NodeUnschedulable runs first and alone decides.
  NodeInfo node =
      NodeBuilder("n1", "1", "1Gi").Unschedulable().Taint("a", "b", "NoSchedule").Info();
  FilterStatus s = RunFilters(DefaultFilters(), *PodBuilder("p").Req("4").Info(), node);
  EXPECT_EQ(s.plugin, kNodeUnschedulable);
  EXPECT_EQ(s.reasons, std::vector<std::string>{"node(s) were unschedulable"});
  // Taints come before node affinity and resources.
  node = NodeBuilder("n1", "1", "1Gi").Taint("a", "b", "NoSchedule").Info();
  s = RunFilters(DefaultFilters(), *PodBuilder("p").Req("4").NodeSelector({{"x", "y"}}).Info(),
                 node);
  EXPECT_EQ(s.plugin, kTaintToleration);
  node = NodeBuilder("n1", "1", "1Gi").Info();
  s = RunFilters(DefaultFilters(), *PodBuilder("p").Req("4").NodeSelector({{"x", "y"}}).Info(),
                 node);
  EXPECT_EQ(s.plugin, kNodeAffinity);
}

}  // namespace
}  // namespace converge::scheduler
