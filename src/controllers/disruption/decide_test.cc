#include "controllers/disruption/decide.h"

#include <gtest/gtest.h>

#include "controllers/common/test_objects.h"

namespace converge::controllers::disruption {
namespace {

namespace json = boost::json;
using testing::At;
using testing::MakePod;

const OwnerRef kRs1{"apps/v1", "ReplicaSet", "web-1", "rs-1", true, true};
const OwnerRef kRs2{"apps/v1", "ReplicaSet", "web-2", "rs-2", true, true};
const OwnerRef kSts{"apps/v1", "StatefulSet", "db", "sts", true, true};

// rs-1 and rs-2 belong to one Deployment of 4 replicas; the StatefulSet has 2.
util::StatusOr<std::optional<ControllerScale>> Resolve(std::string_view, const OwnerRef& ref) {
  if (ref.uid == "rs-1" || ref.uid == "rs-2") return std::optional(ControllerScale{"deploy", 4});
  if (ref.uid == "sts") return std::optional(ControllerScale{"sts", 2});
  return std::optional<ControllerScale>();
}

api::ObjectPtr Budget(const std::string& spec, const std::string& status = "{}",
                      int64_t generation = 1) {
  auto o = api::Object::Parse(R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",)"
                              R"("metadata":{"name":"web","namespace":"default","generation":)" +
                              std::to_string(generation) + R"(},"spec":)" + spec + R"(,"status":)" +
                              status + "}");
  EXPECT_TRUE(o.ok());
  return std::make_shared<const api::Object>(*o);
}

// `ready` ready pods then `unready` unready ones, all owned by `owner`.
std::vector<api::ObjectPtr> Pods(int ready, int unready, std::optional<OwnerRef> owner = kRs1,
                                 const std::string& prefix = "p") {
  std::vector<api::ObjectPtr> out;
  for (int i = 0; i < ready + unready; ++i) {
    out.push_back(MakePod({.name = prefix + std::to_string(i),
                           .ready_since = i < ready ? std::optional<int>(0) : std::nullopt,
                           .owner = owner}));
  }
  return out;
}

int64_t Field(const json::object& status, std::string_view f) {
  return api::FindInt(status, {f}, -1);
}

TEST(DecideBudgetTest, Counts) {
  struct Case {
    std::string name;
    std::string spec;
    std::vector<api::ObjectPtr> pods;
    int64_t expected, desired, healthy, allowed;
  };
  std::vector<api::ObjectPtr> mixed = Pods(2, 0, kRs1, "a");
  for (auto& p : Pods(1, 0, kRs2, "b")) mixed.push_back(p);
  const std::vector<Case> cases = {
      {"minAvailable int: expected = matching pods", R"({"minAvailable":2})", Pods(3, 1), 4, 2, 3,
       1},
      {"minAvailable = replicas: nothing allowed", R"({"minAvailable":3})", Pods(3, 0), 3, 3, 3, 0},
      {"more desired than healthy: never negative", R"({"minAvailable":5})", Pods(3, 0), 3, 5, 3,
       0},
      {"no pods: nothing allowed", R"({"minAvailable":0})", {}, 0, 0, 0, 0},
      {"minAvailable percent of the controller's replicas, rounded up", R"({"minAvailable":"50%"})",
       Pods(3, 0, kSts), 2, 1, 3, 2},
      {"maxUnavailable int", R"({"maxUnavailable":1})", Pods(4, 0), 4, 3, 4, 1},
      {"maxUnavailable percent rounds up", R"({"maxUnavailable":"30%"})", Pods(4, 0), 4, 2, 4, 2},
      {"a Deployment behind two ReplicaSets counts once", R"({"maxUnavailable":0})", mixed, 4, 4, 3,
       0},
      {"maxUnavailable above expected: desired 0", R"({"maxUnavailable":9})", Pods(2, 0), 4, 0, 2,
       2},
  };
  for (const Case& c : cases) {
    BudgetPlan plan = DecideBudget(
        {.budget = Budget(c.spec), .pods = c.pods, .resolve = Resolve, .now = At(100)});
    ASSERT_TRUE(plan.error.ok()) << c.name << ": " << plan.error.ToString();
    ASSERT_TRUE(plan.status.has_value()) << c.name;
    EXPECT_EQ(Field(*plan.status, "expectedPods"), c.expected) << c.name;
    EXPECT_EQ(Field(*plan.status, "desiredHealthy"), c.desired) << c.name;
    EXPECT_EQ(Field(*plan.status, "currentHealthy"), c.healthy) << c.name;
    EXPECT_EQ(Field(*plan.status, "disruptionsAllowed"), c.allowed) << c.name;
    EXPECT_EQ(Field(*plan.status, "observedGeneration"), 1) << c.name;
    const json::array* conds = api::FindArray(*plan.status, {"conditions"});
    ASSERT_NE(conds, nullptr) << c.name;
    ASSERT_EQ(conds->size(), 1u) << c.name;
    const json::object& cond = conds->at(0).as_object();
    EXPECT_EQ(api::FindString(cond, {"type"}), "DisruptionAllowed");
    EXPECT_EQ(api::FindString(cond, {"status"}), c.allowed > 0 ? "True" : "False") << c.name;
    EXPECT_EQ(api::FindString(cond, {"reason"}),
              c.allowed > 0 ? "SufficientPods" : "InsufficientPods")
        << c.name;
  }
}

TEST(DecideBudgetTest, UnchangedStatusIsNotWritten) {
  BudgetPlan first =
      DecideBudget({.budget = Budget(R"({"minAvailable":1})"), .pods = Pods(2, 0), .now = At(100)});
  ASSERT_TRUE(first.status.has_value());
  // The same pods later: the stored status (with its condition's transition time) stands.
  BudgetPlan again =
      DecideBudget({.budget = Budget(R"({"minAvailable":1})", json::serialize(*first.status)),
                    .pods = Pods(2, 0),
                    .now = At(500)});
  EXPECT_FALSE(again.status.has_value());
  // A new generation must be observed even when the counts are the same.
  BudgetPlan bumped =
      DecideBudget({.budget = Budget(R"({"minAvailable":1})", json::serialize(*first.status), 2),
                    .pods = Pods(2, 0),
                    .now = At(500)});
  ASSERT_TRUE(bumped.status.has_value());
  EXPECT_EQ(Field(*bumped.status, "observedGeneration"), 2);
}

TEST(DecideBudgetTest, DisruptedPodsDoNotCountUntilTheyExpire) {
  // p0 was evicted at t=100, p1 at t=10 (expired by t=200); p9 no longer exists.
  const std::string status = R"({"disruptedPods":{"p0":")" + util::FormatRfc3339(At(100)) +
                             R"(","p1":")" + util::FormatRfc3339(At(10)) + R"(","p9":")" +
                             util::FormatRfc3339(At(150)) + R"("}})";
  BudgetPlan plan = DecideBudget(
      {.budget = Budget(R"({"minAvailable":1})", status), .pods = Pods(3, 0), .now = At(200)});
  ASSERT_TRUE(plan.status.has_value());
  EXPECT_EQ(Field(*plan.status, "currentHealthy"), 2);  // p1, p2
  EXPECT_EQ(Field(*plan.status, "disruptionsAllowed"), 1);
  const json::object* disrupted = api::FindObject(*plan.status, {"disruptedPods"});
  ASSERT_NE(disrupted, nullptr);
  EXPECT_EQ(disrupted->size(), 1u);
  EXPECT_TRUE(disrupted->contains("p0"));
  EXPECT_EQ(plan.not_deleted, std::vector<std::string>{"p1"});
  // p0's entry expires at 100 + 120 s.
  ASSERT_TRUE(plan.recheck_after.has_value());
  EXPECT_EQ(*plan.recheck_after, std::chrono::seconds(20));
}

TEST(DecideBudgetTest, PodsBeingDeletedAreNotHealthy) {
  std::vector<api::ObjectPtr> pods = Pods(2, 0);
  pods.push_back(MakePod({.name = "gone", .ready_since = 0, .deleting = true, .owner = kRs1}));
  BudgetPlan plan =
      DecideBudget({.budget = Budget(R"({"minAvailable":1})"), .pods = pods, .now = At(100)});
  ASSERT_TRUE(plan.status.has_value());
  EXPECT_EQ(Field(*plan.status, "currentHealthy"), 2);
  EXPECT_EQ(Field(*plan.status, "expectedPods"), 3);
  EXPECT_EQ(Field(*plan.status, "disruptionsAllowed"), 1);
}

TEST(DecideBudgetTest, PercentagesNeedControllers) {
  // An unmanaged pod is reported and left out of the denominator.
  std::vector<api::ObjectPtr> pods = Pods(2, 0, kSts);
  pods.push_back(MakePod({.name = "bare", .ready_since = 0}));
  BudgetPlan plan = DecideBudget({.budget = Budget(R"({"maxUnavailable":"50%"})"),
                                  .pods = pods,
                                  .resolve = Resolve,
                                  .now = At(100)});
  ASSERT_TRUE(plan.error.ok());
  EXPECT_EQ(plan.unmanaged_pods, std::vector<std::string>{"bare"});
  EXPECT_EQ(Field(*plan.status, "expectedPods"), 2);

  // A controller that cannot be found: fail safe, nothing allowed, the error reported.
  const OwnerRef missing{"apps/v1", "ReplicaSet", "old", "gone", true, true};
  BudgetPlan failed =
      DecideBudget({.budget = Budget(R"({"maxUnavailable":1})", R"({"disruptionsAllowed":3})"),
                    .pods = Pods(2, 0, missing),
                    .resolve = Resolve,
                    .now = At(100)});
  EXPECT_FALSE(failed.error.ok());
  EXPECT_EQ(failed.error.message(), "found no controllers for pod \"p0\"");
  ASSERT_TRUE(failed.status.has_value());
  EXPECT_EQ(Field(*failed.status, "disruptionsAllowed"), 0);
  const json::array* conds = api::FindArray(*failed.status, {"conditions"});
  ASSERT_NE(conds, nullptr);
  EXPECT_EQ(api::FindString(conds->at(0).as_object(), {"reason"}), "SyncFailed");
}

TEST(ScaledValueTest, IntsAndPercentages) {
  EXPECT_EQ(*ScaledValue(json::value(3), 10), 3);
  EXPECT_EQ(*ScaledValue(json::value("50%"), 3), 2);
  EXPECT_EQ(*ScaledValue(json::value("10%"), 1), 1);
  EXPECT_EQ(*ScaledValue(json::value("0%"), 7), 0);
  EXPECT_EQ(*ScaledValue(json::value("100%"), 7), 7);
  EXPECT_FALSE(ScaledValue(json::value("5"), 7).ok());
  EXPECT_FALSE(ScaledValue(json::value("x%"), 7).ok());
}

}  // namespace
}  // namespace converge::controllers::disruption
