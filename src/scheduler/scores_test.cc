#include "scheduler/scores.h"

#include <gtest/gtest.h>

#include "scheduler/scheduler_test_util.h"

namespace converge::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;
namespace json = boost::json;

struct ScoreCase {
  std::string name;
  PodBuilder pod;
  NodeInfo node;
  int64_t score;
};

void CheckScores(int64_t (*score)(const PodInfo&, const NodeInfo&),
                 const std::vector<ScoreCase>& cases) {
  for (const ScoreCase& c : cases) EXPECT_EQ(score(*c.pod.Info(), c.node), c.score) << c.name;
}

TEST(ScoresTest, LeastAllocated) {
  NodeBuilder node("n1", "4", "8Gi");
  PodInfoPtr used = PodBuilder("u").Node("n1").Req("1", "2Gi").Info();
  PodInfoPtr best_effort = PodBuilder("b").Node("n1").Info();  // counts 100m / 200Mi
  std::vector<ScoreCase> cases = {
      {"empty node, small pod", PodBuilder("p").Req("100m", "100Mi"), node.Info(),
       // cpu (4000-100)*100/4000 = 97, memory (8192-100)*100/8192 = 98 -> (97+98)/2 = 97
       97},
      {"half used after placing", PodBuilder("p").Req("1", "2Gi"), node.Info({used}), 50},
      {"a pod without requests counts the defaults", PodBuilder("p"), node.Info({used}),
       // cpu (4000-1100)*100/4000 = 72, memory (8192-2048-200)*100/8192 = 72
       72},
      {"best-effort pods on the node count the defaults", PodBuilder("p").Req("1", "2Gi"),
       node.Info({best_effort}),
       // cpu (4000-1100)*100/4000 = 72, memory (8192-2048-200)*100/8192 = 72
       72},
      {"over capacity scores zero", PodBuilder("p").Req("5", "9Gi"), node.Info(), 0},
      {"a node without memory is scored on cpu", PodBuilder("p").Req("2", "1Gi"),
       NodeBuilder("n1", "4", "0").Info(), 50},
  };
  CheckScores(&ScoreLeastAllocated, cases);
}

TEST(ScoresTest, BalancedAllocation) {
  NodeBuilder node("n1", "4", "8Gi");
  PodInfoPtr mem_heavy = PodBuilder("u").Node("n1").Req("1", "6Gi").Info();
  std::vector<ScoreCase> cases = {
      {"perfectly balanced", PodBuilder("p").Req("2", "4Gi"), node.Info(), 100},
      // cpu 2000/4000 = 0.5, memory 6/8 = 0.75: std 0.125 -> 87
      {"memory heavy node", PodBuilder("p").Req("1"), node.Info({mem_heavy}), 87},
      // cpu 4/4 = 1 (capped from 1.25), memory 0: std 0.5 -> 50
      {"fractions are capped at 1", PodBuilder("p").Req("5"), node.Info(), 50},
      {"actual requests, not the defaults", PodBuilder("p").Req("2", "4Gi"),
       node.Info({PodBuilder("b").Node("n1").Info()}), 100},
  };
  CheckScores(&ScoreBalancedAllocation, cases);
}

TEST(ScoresTest, TaintTolerationCountsIntolerablePreferNoSchedule) {
  NodeBuilder node = NodeBuilder("n1", "1", "1Gi")
                         .Taint("a", "1", "PreferNoSchedule")
                         .Taint("b", "2", "PreferNoSchedule")
                         .Taint("c", "3", "NoSchedule");
  json::array tolerate_a{json::object{{"key", "a"}, {"operator", "Exists"}}};
  json::array tolerate_b_noschedule{
      json::object{{"key", "b"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  json::array tolerate_b_prefer{
      json::object{{"key", "b"}, {"operator", "Exists"}, {"effect", "PreferNoSchedule"}}};
  std::vector<ScoreCase> cases = {
      {"no tolerations", PodBuilder("p"), node.Info(), 2},
      {"one tolerated", PodBuilder("p").Tolerations(tolerate_a), node.Info(), 1},
      {"a NoSchedule toleration does not count", PodBuilder("p").Tolerations(tolerate_b_noschedule),
       node.Info(), 2},
      {"a PreferNoSchedule toleration counts", PodBuilder("p").Tolerations(tolerate_b_prefer),
       node.Info(), 1},
      {"untainted node", PodBuilder("p"), NodeBuilder("n2", "1", "1Gi").Info(), 0},
  };
  CheckScores(&ScoreTaintToleration, cases);
}

TEST(ScoresTest, NodeAffinitySumsMatchingPreferredWeights) {
  auto pref = [](int weight, std::string key, std::string value) {
    return json::object{
        {"weight", weight},
        {"preference",
         json::object{{"matchExpressions",
                       json::array{json::object{
                           {"key", key}, {"operator", "In"}, {"values", json::array{value}}}}}}}};
  };
  PodBuilder pod =
      PodBuilder("p").PreferredAffinity({pref(10, "zone", "a"), pref(5, "disk", "ssd")});
  std::vector<ScoreCase> cases = {
      {"both", pod, NodeBuilder("n1", "1", "1Gi").Label("zone", "a").Label("disk", "ssd").Info(),
       15},
      {"one", pod, NodeBuilder("n1", "1", "1Gi").Label("zone", "a").Info(), 10},
      {"none", pod, NodeBuilder("n1", "1", "1Gi").Label("zone", "b").Info(), 0},
  };
  CheckScores(&ScoreNodeAffinity, cases);
}

TEST(ScoresTest, DefaultNormalizeScore) {
  struct Case {
    const char* name;
    std::vector<int64_t> in;
    bool reverse;
    std::vector<int64_t> out;
  };
  const Case cases[] = {
      {"scaled to the max", {15, 10, 0}, false, {100, 66, 0}},
      {"reversed", {0, 1, 2}, true, {100, 50, 0}},
      {"all zero", {0, 0}, false, {0, 0}},
      {"all zero reversed", {0, 0}, true, {100, 100}},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> v = c.in;
    DefaultNormalizeScore(kMaxNodeScore, c.reverse, v);
    EXPECT_EQ(v, c.out) << c.name;
  }
}

TEST(ScoresTest, DefaultWeightsAndSkips) {
  std::span<const ScorePlugin> s = DefaultScorers();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].name, "TaintToleration");
  EXPECT_EQ(s[0].weight, 3);
  EXPECT_EQ(s[1].name, "NodeAffinity");
  EXPECT_EQ(s[1].weight, 2);
  EXPECT_EQ(s[2].name, "NodeResourcesFit");
  EXPECT_EQ(s[2].weight, 1);
  EXPECT_EQ(s[3].name, "NodeResourcesBalancedAllocation");
  EXPECT_EQ(s[3].weight, 1);
  // NodeAffinity skips pods without preferences; BalancedAllocation skips best-effort pods.
  EXPECT_FALSE(s[1].applies(*PodBuilder("p").Info()));
  EXPECT_FALSE(s[3].applies(*PodBuilder("p").Info()));
  EXPECT_TRUE(s[3].applies(*PodBuilder("p").Req("1m").Info()));
}

}  // namespace
}  // namespace converge::scheduler
