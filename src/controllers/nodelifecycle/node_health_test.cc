#include "controllers/nodelifecycle/node_health.h"

#include <gtest/gtest.h>

#include "controllers/nodelifecycle/zones.h"
#include "util/clock.h"
#include "util/time_format.h"

namespace converge::controllers::nodelifecycle {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

api::Object Node(std::string_view ready, std::string_view heartbeat,
                 std::vector<Taint> taints = {}) {
  json::object doc{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", json::object{{"name", "n"}, {"creationTimestamp", "2025-01-01T00:00:00Z"}}}};
  json::array conds;
  if (!ready.empty()) {
    for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
      conds.push_back(json::object{{"type", type},
                                   {"status", std::string_view(type) == "Ready" ? ready : "False"},
                                   {"lastHeartbeatTime", heartbeat},
                                   {"lastTransitionTime", "2025-01-01T00:00:00Z"},
                                   {"reason", "KubeletReady"}});
    }
  }
  doc["status"] = json::object{{"conditions", std::move(conds)}};
  if (!taints.empty()) doc["spec"] = json::object{{"taints", TaintsJson(taints)}};
  return api::Object(std::move(doc));
}

TEST(NodeHealthTest, SilenceForTheGracePeriodMakesConditionsUnknown) {
  util::FakeClock clock;
  NodeHealth h;
  NodeHealthOptions o;  // 50 s
  const WallTime t0 = clock.WallNow();
  api::Object node = Node("True", "2025-01-01T00:00:00Z");
  struct Step {
    Duration at;
    std::string lease;  // the Lease's renewTime seen at that time
    bool marks;
  };
  for (const Step& s : std::vector<Step>{{0s, "r0", false},
                                         {30s, "r0", false},
                                         {40s, "r1", false},  // renewed: probe at 40 s
                                         {90s, "r1", false},  // exactly the grace: not yet
                                         {91s, "r1", true}}) {
    NodeHealthDecision d = DecideNodeHealth(node, s.lease, h, t0 + s.at, o);
    EXPECT_EQ(d.new_conditions.has_value(), s.marks) << s.at.count();
    if (!s.marks) continue;
    EXPECT_EQ(d.observed_ready, "True");
    EXPECT_EQ(d.current_ready, "Unknown");
    int unknown = 0;
    for (const json::value& c : *d.new_conditions) {
      const json::object& o2 = c.as_object();
      EXPECT_EQ(api::Object::GetString(o2, "status"), "Unknown");
      EXPECT_EQ(api::Object::GetString(o2, "reason"), "NodeStatusUnknown");
      EXPECT_EQ(api::Object::GetString(o2, "message"), "Kubelet stopped posting node status.");
      EXPECT_EQ(api::Object::GetString(o2, "lastTransitionTime"), util::FormatRfc3339(t0 + 91s));
      EXPECT_EQ(api::Object::GetString(o2, "lastHeartbeatTime"), "2025-01-01T00:00:00Z");
      ++unknown;
    }
    EXPECT_EQ(unknown, 4);
  }
}

TEST(NodeHealthTest, HeartbeatsInStatusAlsoCount) {
  NodeHealth h;
  WallTime t0{};
  (void)DecideNodeHealth(Node("True", "a"), "", h, t0, {});
  EXPECT_FALSE(DecideNodeHealth(Node("True", "b"), "", h, t0 + 45s, {}).new_conditions);
  EXPECT_FALSE(DecideNodeHealth(Node("True", "b"), "", h, t0 + 95s, {}).new_conditions);
  EXPECT_TRUE(DecideNodeHealth(Node("True", "b"), "", h, t0 + 96s, {}).new_conditions);
}

TEST(NodeHealthTest, NeverPostedUsesTheStartupGraceAndCreationTime) {
  NodeHealth h;
  api::Object node = Node("", "");
  WallTime created = *util::ParseRfc3339("2025-01-01T00:00:00Z");
  EXPECT_FALSE(DecideNodeHealth(node, "", h, created + 60s, {}).new_conditions);
  NodeHealthDecision d = DecideNodeHealth(node, "", h, created + 61s, {});
  ASSERT_TRUE(d.new_conditions);
  EXPECT_EQ(d.new_conditions->size(), 4u);
  EXPECT_EQ(api::Object::GetString(d.new_conditions->at(0).as_object(), "reason"),
            "NodeStatusNeverUpdated");
  EXPECT_EQ(api::Object::GetString(d.new_conditions->at(0).as_object(), "message"),
            "Kubelet never posted node status.");
}

TEST(NodeHealthTest, NoScheduleTaintsFollowConditions) {
  struct Case {
    std::string name;
    std::string ready;
    std::vector<Taint> taints;
    std::optional<std::vector<std::string>> want;  // keys; nullopt: no change
  };
  const std::vector<Case> cases = {
      {"HealthyUntainted", "True", {}, std::nullopt},
      {"UnknownGetsUnreachable",
       "Unknown",
       {},
       std::vector<std::string>{"node.kubernetes.io/unreachable"}},
      {"FalseGetsNotReady", "False", {}, std::vector<std::string>{"node.kubernetes.io/not-ready"}},
      {"RecoveredLosesIt",
       "True",
       {{"node.kubernetes.io/unreachable", "", "NoSchedule", ""},
        {"dedicated", "x", "NoSchedule", ""}},
       std::vector<std::string>{"dedicated"}},
      {"AlreadyRight",
       "Unknown",
       {{"node.kubernetes.io/unreachable", "", "NoSchedule", ""}},
       std::nullopt},
  };
  for (const Case& c : cases) {
    auto got = NoScheduleTaintUpdate(Node(c.ready, "h", c.taints));
    ASSERT_EQ(got.has_value(), c.want.has_value()) << c.name;
    if (!got) continue;
    std::vector<std::string> keys;
    for (const Taint& t : *got) keys.push_back(t.key);
    EXPECT_EQ(keys, *c.want) << c.name;
  }
}

TEST(NodeHealthTest, NoExecuteDecisions) {
  WallTime now{};
  const Taint unreachable{"node.kubernetes.io/unreachable", "", "NoExecute",
                          "2025-01-01T00:00:00Z"};
  const Taint not_ready{"node.kubernetes.io/not-ready", "", "NoExecute", "2025-01-01T00:00:00Z"};
  using K = NoExecuteAction::Kind;
  struct Case {
    std::string name;
    std::vector<Taint> taints;
    std::string ready;
    K kind;
  };
  for (const Case& c :
       std::vector<Case>{{"HealthyNothing", {}, "True", K::kNone},
                         {"UnknownQueued", {}, "Unknown", K::kAddRateLimited},
                         {"FalseQueued", {}, "False", K::kAddRateLimited},
                         {"AlreadyTainted", {unreachable}, "Unknown", K::kNone},
                         {"SwapToNotReady", {unreachable}, "False", K::kSwapNow},
                         {"RecoveredRemoves", {not_ready}, "True", K::kRemoveNow}}) {
    EXPECT_EQ(DecideNoExecute(c.taints, c.ready, now).kind, c.kind) << c.name;
  }
  auto added = WithNoExecuteTaint({}, "Unknown", *util::ParseRfc3339("2025-02-03T04:05:06Z"));
  ASSERT_TRUE(added);
  ASSERT_EQ(added->size(), 1u);
  EXPECT_EQ(added->at(0).key, "node.kubernetes.io/unreachable");
  EXPECT_EQ(added->at(0).time_added, "2025-02-03T04:05:06Z");
  EXPECT_FALSE(WithNoExecuteTaint({}, "True", now)) << "recovered meanwhile";
}

TEST(ZonesTest, StatesAndRates) {
  using S = ZoneState;
  struct Case {
    std::vector<std::string> ready;
    S want;
  };
  for (const Case& c : std::vector<Case>{
           {{"True", "True", "Unknown"}, S::kNormal},
           {{"Unknown", "Unknown"}, S::kFullDisruption},
           {{"Unknown", "Unknown", "False", "True"}, S::kPartialDisruption},
           {{"Unknown", "Unknown", "True"}, S::kNormal},  // only 2 not ready
       }) {
    EXPECT_EQ(ComputeZoneState(c.ready, 0.55), c.want);
  }
  ZoneRates r;
  EXPECT_EQ(ZoneTaintRate(S::kNormal, 3, r), 0.1);
  EXPECT_EQ(ZoneTaintRate(S::kPartialDisruption, 10, r), 0);
  EXPECT_EQ(ZoneTaintRate(S::kPartialDisruption, 100, r), 0.01);
  EXPECT_EQ(ZoneTaintRate(S::kFullDisruption, 3, r), 0.1);
}

}  // namespace
}  // namespace converge::controllers::nodelifecycle
