#include "controllers/replicaset/decide.h"

#include <gtest/gtest.h>

#include "controllers/common/test_objects.h"

namespace converge::controllers::replicaset {
namespace {

namespace json = boost::json;
using testing::At;
using testing::MakePod;
using testing::MakeReplicaSet;

std::vector<api::ObjectPtr> Pods(int n, std::optional<int> ready_since = std::nullopt) {
  std::vector<api::ObjectPtr> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(MakePod({.name = "p" + std::to_string(i), .ready_since = ready_since}));
  }
  return out;
}

TEST(DecideReplicasTest, Table) {
  struct Case {
    std::string name;
    int64_t replicas;
    int pods;
    bool satisfied;
    bool deleting;
    int burst;
    int want_creates;
    size_t want_deletes;
  };
  std::vector<Case> cases = {
      {"steady", 3, 3, true, false, 500, 0, 0},
      {"scale up 1 to 3", 3, 1, true, false, 500, 2, 0},
      {"scale down 3 to 0", 0, 3, true, false, 500, 0, 3},
      {"scale down 5 to 2", 2, 5, true, false, 500, 0, 3},
      {"expectations pending: nothing, however far off", 5, 0, false, false, 500, 0, 0},
      {"being deleted: nothing", 3, 0, true, true, 500, 0, 0},
      {"burst caps creates", 1000, 10, true, false, 500, 500, 0},
      {"burst caps deletes", 0, 10, true, false, 4, 0, 4},
  };
  for (const Case& c : cases) {
    Snapshot s{.rs = MakeReplicaSet({.replicas = c.replicas, .deleting = c.deleting}),
               .pods = Pods(c.pods),
               .expectations_satisfied = c.satisfied,
               .now = At(100),
               .burst_replicas = c.burst};
    ReplicaPlan plan = DecideReplicas(s);
    EXPECT_EQ(plan.creates, c.want_creates) << c.name;
    EXPECT_EQ(plan.deletes.size(), c.want_deletes) << c.name;
  }
}

TEST(DecideReplicasTest, DeletesTheLeastValuablePodsFirst) {
  std::vector<api::ObjectPtr> pods = {
      MakePod({.name = "ready", .ready_since = 1, .node = "n1"}),
      MakePod({.name = "pending", .phase = "Pending"}),
      MakePod({.name = "unready", .node = "n1"}),
  };
  Snapshot s{.rs = MakeReplicaSet({.replicas = 1}), .pods = pods, .now = At(1000)};
  ReplicaPlan plan = DecideReplicas(s);
  ASSERT_EQ(plan.deletes.size(), 2u);
  EXPECT_EQ(plan.deletes[0]->name(), "pending");
  EXPECT_EQ(plan.deletes[1]->name(), "unready");
}

TEST(CalculateStatusTest, CountsReadyAvailableAndLabeled) {
  api::ObjectPtr rs = MakeReplicaSet({.replicas = 4,
                                      .template_labels = {{"app", "web"}, {"tier", "fe"}},
                                      .min_ready_seconds = 10});
  std::vector<api::ObjectPtr> pods = {
      // Fully labeled, ready for 50 s: available.
      MakePod({.name = "a", .labels = {{"app", "web"}, {"tier", "fe"}}, .ready_since = 50}),
      // Ready for 5 s (< minReadySeconds): ready, not available.
      MakePod({.name = "b", .labels = {{"app", "web"}, {"tier", "fe"}}, .ready_since = 95}),
      // Matches the selector but lacks a template label; not ready.
      MakePod({.name = "c"}),
  };
  ReplicaSetStatus st = CalculateStatus(*rs, pods, util::Status(), At(100));
  EXPECT_EQ(st.replicas, 3);
  EXPECT_EQ(st.fully_labeled_replicas, 2);
  EXPECT_EQ(st.ready_replicas, 2);
  EXPECT_EQ(st.available_replicas, 1);
  EXPECT_TRUE(st.conditions.empty());
  // b becomes available after 95 + 10 = 105; the requeue adds a second: 6 s from now.
  EXPECT_EQ(RequeueAfter(*rs, pods, At(100)), std::chrono::seconds(6));
  EXPECT_FALSE(RequeueAfter(*MakeReplicaSet({.min_ready_seconds = 0}), pods, At(100)).has_value());
}

TEST(CalculateStatusTest, ReplicaFailureSetAndCleared) {
  api::ObjectPtr rs = MakeReplicaSet({.replicas = 3});
  ReplicaSetStatus failed =
      CalculateStatus(*rs, Pods(1), util::ResourceExhausted("exceeded quota: pods"), At(7));
  ASSERT_EQ(failed.conditions.size(), 1u);
  EXPECT_EQ(failed.conditions[0].type, "ReplicaFailure");
  EXPECT_EQ(failed.conditions[0].status, "True");
  EXPECT_EQ(failed.conditions[0].reason, "FailedCreate");
  EXPECT_EQ(failed.conditions[0].message, "exceeded quota: pods");
  EXPECT_EQ(failed.conditions[0].last_transition_time, "2025-01-01T00:00:07Z");

  // Too many pods: FailedDelete.
  EXPECT_EQ(
      CalculateStatus(*MakeReplicaSet({.replicas = 0}), Pods(2), util::Unavailable("x"), At(7))
          .conditions[0]
          .reason,
      "FailedDelete");

  // Stored with the condition; a later failure keeps the first one; success clears it.
  json::object stored = failed.ToJson();
  api::ObjectPtr rs2 = MakeReplicaSet({.replicas = 3, .status = stored});
  ReplicaSetStatus again = CalculateStatus(*rs2, Pods(1), util::Unavailable("other"), At(9));
  EXPECT_EQ(again.conditions, failed.conditions);
  EXPECT_TRUE(CalculateStatus(*rs2, Pods(3), util::Status(), At(9)).conditions.empty());
}

TEST(StatusNeedsUpdateTest, OnlyWhenSomethingChanged) {
  json::object stored =
      json::parse(
          R"({"replicas":3,"fullyLabeledReplicas":3,"readyReplicas":3,"availableReplicas":3,
          "observedGeneration":2})")
          .as_object();
  api::ObjectPtr rs = MakeReplicaSet({.replicas = 3, .generation = 2, .status = stored});
  ReplicaSetStatus same = CalculateStatus(*rs, Pods(3, 0), util::Status(), At(100));
  EXPECT_FALSE(StatusNeedsUpdate(*rs, same));
  ReplicaSetStatus fewer = CalculateStatus(*rs, Pods(2, 0), util::Status(), At(100));
  EXPECT_TRUE(StatusNeedsUpdate(*rs, fewer));
  // A new generation must be observed even when the counts did not move.
  api::ObjectPtr newer = MakeReplicaSet({.replicas = 3, .generation = 3, .status = stored});
  EXPECT_TRUE(
      StatusNeedsUpdate(*newer, CalculateStatus(*newer, Pods(3, 0), util::Status(), At(100))));
}

TEST(ReplicaSetStatusTest, JsonOmitsZeros) {
  ReplicaSetStatus st;
  EXPECT_EQ(json::serialize(st.ToJson()), R"({"replicas":0})");
  st.replicas = 2;
  st.ready_replicas = 1;
  st.observed_generation = 4;
  EXPECT_EQ(st.ToJson(), json::parse(R"({"replicas":2,"readyReplicas":1,"observedGeneration":4})"));
  api::Object rs;
  rs.mutable_doc()["status"] = st.ToJson();
  EXPECT_EQ(ReplicaSetStatus::FromObject(rs), st);
}

}  // namespace
}  // namespace converge::controllers::replicaset
