#include "apiserver/eviction.h"

#include <gtest/gtest.h>

#include <string>

namespace converge::apiserver {
namespace {

api::Object Obj(const std::string& json) {
  auto o = api::Object::Parse(json);
  EXPECT_TRUE(o.ok()) << json;
  return o.ok() ? *o : api::Object();
}

api::Object PodWithPhase(const std::string& phase, bool ready, bool deleting = false) {
  std::string meta =
      R"({"name":"web-1","namespace":"d","labels":{"app":"web"},"resourceVersion":"7")";
  if (deleting) meta += R"(,"deletionTimestamp":"2026-01-01T00:00:00Z")";
  meta += "}";
  return Obj(R"({"metadata":)" + meta + R"(,"status":{"phase":")" + phase +
             R"(","conditions":[{"type":"Ready","status":")" + (ready ? "True" : "False") +
             R"("}]}})");
}

// A budget with metadata.generation 1 and the given status (observedGeneration 1 unless set).
api::Object Budget(const std::string& name, const std::string& status,
                   const std::string& spec = R"({"selector":{"matchLabels":{"app":"web"}}})") {
  return Obj(R"({"metadata":{"name":")" + name + R"(","namespace":"d","generation":1},"spec":)" +
             spec + R"(,"status":)" + status + "}");
}

TEST(EvictionTest, PodsWithNothingToDisruptSkipTheBudget) {
  struct Case {
    const char* name;
    api::Object pod;
    bool ignore;
    bool enforce_rv;
  };
  const Case cases[] = {
      {"running ready", PodWithPhase("Running", true), false, true},
      {"running unready", PodWithPhase("Running", false), false, true},
      {"pending", PodWithPhase("Pending", false), true, true},
      {"succeeded", PodWithPhase("Succeeded", false), true, false},
      {"failed", PodWithPhase("Failed", false), true, false},
      {"being deleted", PodWithPhase("Running", true, /*deleting=*/true), true, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(CanIgnoreBudget(c.pod), c.ignore) << c.name;
    EXPECT_EQ(ShouldEnforceResourceVersion(c.pod), c.enforce_rv) << c.name;
  }
}

TEST(EvictionTest, BudgetsForPodMatchTheSelectorInTheNamespace) {
  std::vector<api::Object> budgets = {
      Budget("match", "{}"),
      Budget("other-app", "{}", R"({"selector":{"matchLabels":{"app":"db"}}})"),
      Budget("no-selector", "{}", "{}"),
      Budget(
          "expr", "{}",
          R"({"selector":{"matchExpressions":[{"key":"app","operator":"In","values":["web"]}]}})"),
      Obj(R"({"metadata":{"name":"elsewhere","namespace":"x"},"spec":{"selector":{}}})"),
  };
  std::vector<std::string> names;
  for (const api::Object* b : BudgetsForPod(PodWithPhase("Running", true), budgets)) {
    names.emplace_back(b->name());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"match", "expr"}));
}

TEST(EvictionTest, UnreadyPodBypass) {
  struct Case {
    const char* name;
    api::Object budget;
    bool bypass;
  };
  const Case cases[] = {
      {"healthy budget", Budget("b", R"({"currentHealthy":3,"desiredHealthy":2})"), true},
      {"exactly healthy", Budget("b", R"({"currentHealthy":2,"desiredHealthy":2})"), true},
      {"unhealthy budget", Budget("b", R"({"currentHealthy":1,"desiredHealthy":2})"), false},
      {"nothing desired", Budget("b", R"({"currentHealthy":0,"desiredHealthy":0})"), false},
      {"always allow",
       Budget("b", R"({"currentHealthy":0,"desiredHealthy":2})",
              R"({"selector":{},"unhealthyPodEvictionPolicy":"AlwaysAllow"})"),
       true},
      {"if healthy budget",
       Budget("b", R"({"currentHealthy":1,"desiredHealthy":2})",
              R"({"selector":{},"unhealthyPodEvictionPolicy":"IfHealthyBudget"})"),
       false},
  };
  for (const Case& c : cases) EXPECT_EQ(UnreadyPodBypassesBudget(c.budget), c.bypass) << c.name;
}

TEST(EvictionTest, CheckAndDecrementTakesOneDisruption) {
  api::Object budget = Budget(
      "web",
      R"({"observedGeneration":1,"disruptionsAllowed":2,"currentHealthy":3,"desiredHealthy":1})");
  auto next = CheckAndDecrement(budget, "web-1", "2026-11-29T16:00:00Z", /*dry_run=*/false);
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(api::FindInt(next->doc(), {"status", "disruptionsAllowed"}), 1);
  EXPECT_EQ(api::FindString(next->doc(), {"status", "disruptedPods", "web-1"}),
            "2026-11-29T16:00:00Z");
  // The condition changes only when the last disruption is taken.
  EXPECT_EQ(api::FindArray(next->doc(), {"status", "conditions"}), nullptr);

  auto last = CheckAndDecrement(*next, "web-2", "2026-11-29T16:00:01Z", /*dry_run=*/false);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(api::FindInt(last->doc(), {"status", "disruptionsAllowed"}), 0);
  const boost::json::array* conds = api::FindArray(last->doc(), {"status", "conditions"});
  ASSERT_NE(conds, nullptr);
  ASSERT_EQ(conds->size(), 1u);
  EXPECT_EQ(api::FindString(conds->at(0).as_object(), {"type"}), "DisruptionAllowed");
  EXPECT_EQ(api::FindString(conds->at(0).as_object(), {"status"}), "False");
  EXPECT_EQ(api::FindString(conds->at(0).as_object(), {"reason"}), "InsufficientPods");
  EXPECT_EQ(api::FindObject(last->doc(), {"status", "disruptedPods"})->size(), 2u);
}

TEST(EvictionTest, CheckAndDecrementDryRunRecordsNothing) {
  api::Object budget = Budget("web", R"({"observedGeneration":1,"disruptionsAllowed":1})");
  auto next = CheckAndDecrement(budget, "web-1", "2026-11-29T16:00:00Z", /*dry_run=*/true);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(api::FindObject(next->doc(), {"status", "disruptedPods"}), nullptr);
}

TEST(EvictionTest, CheckAndDecrementRefusals) {
  struct Case {
    const char* name;
    std::string status;
    int code;
    std::string message;
    std::string cause;  // the DisruptionBudget cause's message; "" = none
  };
  const Case cases[] = {
      {"no disruptions allowed",
       R"({"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":3,"desiredHealthy":3})",
       429, "Cannot evict pod as it would violate the pod's disruption budget.",
       "The disruption budget web needs 3 healthy pods and has 3 currently"},
      {"generation not observed", R"({"observedGeneration":0,"disruptionsAllowed":5})", 429,
       "Cannot evict pod as it would violate the pod's disruption budget.",
       "The disruption budget web is still being processed by the server."},
      {"negative", R"({"observedGeneration":1,"disruptionsAllowed":-1})", 403,
       "poddisruptionbudget.policy \"web\" is forbidden: pdb disruptions allowed is negative", ""},
  };
  for (const Case& c : cases) {
    auto r = CheckAndDecrement(Budget("web", c.status), "web-1", "t", false);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().code, c.code) << c.name;
    EXPECT_EQ(r.error().message, c.message) << c.name;
    if (c.cause.empty()) continue;
    ASSERT_EQ(r.error().causes.size(), 1u) << c.name;
    EXPECT_EQ(r.error().causes[0].reason, "DisruptionBudget") << c.name;
    EXPECT_EQ(r.error().causes[0].message, c.cause) << c.name;
  }
}

TEST(EvictionTest, CheckAndDecrementRefusesWhenTooManyUnconfirmed) {
  boost::json::object disrupted;
  for (size_t i = 0; i <= kMaxDisruptedPods; ++i) disrupted["p" + std::to_string(i)] = "t";
  api::Object budget = Budget("web", R"({"observedGeneration":1,"disruptionsAllowed":1})");
  budget.mutable_doc()["status"].as_object()["disruptedPods"] = std::move(disrupted);
  auto r = CheckAndDecrement(budget, "web-1", "t", false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 403);
}

TEST(EvictionTest, MarkDisruptionTargetKeepsTheTransitionTime) {
  api::Object pod = PodWithPhase("Running", true);
  MarkDisruptionTarget(pod, "2026-11-29T16:00:00Z");
  MarkDisruptionTarget(pod, "2026-11-29T16:05:00Z");
  const boost::json::array* conds = api::FindArray(pod.doc(), {"status", "conditions"});
  ASSERT_EQ(conds->size(), 2u);  // Ready and DisruptionTarget
  const boost::json::object& c = conds->at(1).as_object();
  EXPECT_EQ(api::FindString(c, {"type"}), "DisruptionTarget");
  EXPECT_EQ(api::FindString(c, {"reason"}), "EvictionByEvictionAPI");
  EXPECT_EQ(api::FindString(c, {"lastTransitionTime"}), "2026-11-29T16:00:00Z");
}

}  // namespace
}  // namespace converge::apiserver
