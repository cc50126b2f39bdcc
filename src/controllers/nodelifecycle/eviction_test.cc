#include "controllers/nodelifecycle/eviction.h"

#include <gtest/gtest.h>

#include "util/time_format.h"

namespace converge::controllers::nodelifecycle {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;
using WallTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

api::ObjectPtr Pod(const std::string& name, json::array tolerations = {},
                   std::string_view phase = "Running", bool deleting = false) {
  json::object meta{{"name", name}, {"namespace", "default"}};
  if (deleting) meta["deletionTimestamp"] = "2025-01-01T00:00:00Z";
  return std::make_shared<const api::Object>(json::object{
      {"metadata", std::move(meta)},
      {"spec", json::object{{"nodeName", "n"}, {"tolerations", std::move(tolerations)}}},
      {"status", json::object{{"phase", phase}}}});
}

json::object Tol(std::string_view key, std::optional<int64_t> seconds,
                 std::string_view op = "Exists", std::string_view effect = "NoExecute") {
  json::object t{{"key", key}, {"operator", op}, {"effect", effect}};
  if (seconds) t["tolerationSeconds"] = *seconds;
  return t;
}

TEST(EvictionTest, DecidesByTolerations) {
  const WallTime added = *util::ParseRfc3339("2025-01-01T00:00:00Z");
  const std::vector<Taint> taints = {
      {"node.kubernetes.io/unreachable", "", "NoExecute", "2025-01-01T00:00:00Z"},
      {"node.kubernetes.io/unreachable", "", "NoSchedule", ""}};
  struct Case {
    std::string name;
    api::ObjectPtr pod;
    std::optional<int64_t> implicit;
    Duration at;
    bool evict;
    std::optional<Duration> recheck;
  };
  const std::vector<Case> cases = {
      {"NoTolerationEvictedAtOnce", Pod("a"), std::nullopt, 0s, true, std::nullopt},
      {"ForeverToleration", Pod("b", {Tol("node.kubernetes.io/unreachable", std::nullopt)}),
       std::nullopt, 1000s, false, std::nullopt},
      {"TolerationRunningOut", Pod("c", {Tol("node.kubernetes.io/unreachable", 30)}), std::nullopt,
       10s, false, 20s},
      {"TolerationRanOut", Pod("d", {Tol("node.kubernetes.io/unreachable", 30)}), std::nullopt, 30s,
       true, std::nullopt},
      {"WrongKeyDoesNotTolerate", Pod("e", {Tol("node.kubernetes.io/not-ready", std::nullopt)}),
       std::nullopt, 0s, true, std::nullopt},
      {"EmptyKeyExistsToleratesAll", Pod("f", {Tol("", std::nullopt, "Exists", "")}), std::nullopt,
       0s, false, std::nullopt},
      {"ImplicitDefaultTolerationSeconds", Pod("g"), 300, 299s, false, 1s},
      {"ImplicitRunsOut", Pod("h"), 300, 300s, true, std::nullopt},
      {"ExplicitBeatsImplicit", Pod("i", {Tol("node.kubernetes.io/unreachable", 5)}), 300, 6s, true,
       std::nullopt},
      {"BeingDeletedIsLeftAlone", Pod("j", {}, "Running", true), std::nullopt, 0s, false,
       std::nullopt},
      {"FinishedIsLeftAlone", Pod("k", {}, "Succeeded"), std::nullopt, 0s, false, std::nullopt},
  };
  for (const Case& c : cases) {
    EvictionPlan plan = DecideEvictions(taints, {c.pod}, added + c.at, {c.implicit});
    EXPECT_EQ(plan.evict.size(), c.evict ? 1u : 0u) << c.name;
    EXPECT_EQ(plan.recheck_after, c.recheck) << c.name;
  }
}

TEST(EvictionTest, NoNoExecuteTaintsNoEvictions) {
  EvictionPlan plan = DecideEvictions({{"x", "", "NoSchedule", ""}}, {Pod("a")}, WallTime{}, {});
  EXPECT_TRUE(plan.evict.empty());
}

}  // namespace
}  // namespace converge::controllers::nodelifecycle
