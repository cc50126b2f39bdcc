// Table tests of the Deployment controller's Decide, and a model-based rollout: Decide driven
// against a simulated world (ReplicaSets and pods) until it converges, checking the
// maxSurge/maxUnavailable invariants at every step.
#include "controllers/deployment/decide.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "controllers/deployment/deployment_test_objects.h"
#include "controllers/deployment/rolling.h"

namespace converge::controllers::deployment {
namespace {

namespace json = boost::json;
using testing::DeploymentSpec;
using testing::MakeDeployment;
using testing::MakeOwnedReplicaSet;
using testing::RsName;

Snapshot Snap(api::ObjectPtr d, std::vector<api::ObjectPtr> rss, int now = 1000) {
  Snapshot s;
  s.deployment = std::move(d);
  s.replica_sets = std::move(rss);
  s.now = testing::At(now);
  return s;
}

std::string KindName(ReplicaSetAction::Kind k) {
  switch (k) {
    case ReplicaSetAction::Kind::kCreate: return "create";
    case ReplicaSetAction::Kind::kUpdate: return "update";
    case ReplicaSetAction::Kind::kDelete: return "delete";
  }
  return "?";
}

// "create web-abc 1", "update web-def 2", "delete web-ghi" in plan order.
std::vector<std::string> Actions(const Plan& p) {
  std::vector<std::string> out;
  for (const ReplicaSetAction& a : p.actions) {
    std::string s = KindName(a.kind) + " " + std::string(a.object.name());
    if (a.kind != ReplicaSetAction::Kind::kDelete) s += " " + std::to_string(Replicas(a.object));
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> Events(const Plan& p) {
  std::vector<std::string> out;
  for (const ReplicaSetAction& a : p.actions) {
    for (const PlannedEvent& e : a.events) out.push_back(e.reason + ": " + e.message);
  }
  for (const PlannedEvent& e : p.events) out.push_back(e.reason + ": " + e.message);
  return out;
}

const ReplicaSetAction* ActionOn(const Plan& p, const std::string& name) {
  for (const ReplicaSetAction& a : p.actions) {
    if (a.object.name() == name) return &a;
  }
  return nullptr;
}

DeploymentStatus StatusOf(const Plan& p) {
  EXPECT_TRUE(p.status_update.has_value());
  return p.status_update ? DeploymentStatus::FromObject(*p.status_update) : DeploymentStatus();
}

std::string ConditionOf(const DeploymentStatus& st, std::string_view type) {
  const Condition* c = FindCondition(st.conditions, type);
  return c == nullptr ? "none" : c->status + "/" + c->reason;
}

TEST(DeploymentDecideTest, CreatesTheFirstReplicaSetWithHashRevisionAndAnnotations) {
  api::ObjectPtr d = MakeDeployment({.replicas = 3});
  Plan p = Decide(Snap(d, {}));
  std::string name = RsName("nginx:1");
  // 3 replicas, maxSurge 1: the new ReplicaSet may take all 3 at once (nothing else runs).
  ASSERT_EQ(Actions(p), (std::vector<std::string>{"create " + name + " 3"}));
  const api::Object& rs = p.actions[0].object;
  std::string hash = testing::HashOf("nginx:1");
  EXPECT_EQ(name, "web-" + hash);
  EXPECT_EQ(api::FindString(rs.doc(), {"metadata", "labels", "pod-template-hash"}), hash);
  EXPECT_EQ(api::FindString(rs.doc(), {"spec", "selector", "matchLabels", "pod-template-hash"}),
            hash);
  EXPECT_EQ(
      api::FindString(rs.doc(), {"spec", "template", "metadata", "labels", "pod-template-hash"}),
      hash);
  EXPECT_EQ(rs.annotation(kRevisionAnnotation), "1");
  EXPECT_EQ(rs.annotation(kDesiredReplicasAnnotation), "3");
  EXPECT_EQ(rs.annotation(kMaxReplicasAnnotation), "4");
  std::optional<OwnerRef> owner = GetControllerOf(rs);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->uid, "d-uid");
  EXPECT_EQ(owner->kind, "Deployment");
  EXPECT_EQ(Events(p), (std::vector<std::string>{"ScalingReplicaSet: Scaled up replica set " +
                                                 name + " from 0 to 3"}));
  // The Deployment: revision 1, Progressing NewReplicaSetCreated, Available False.
  ASSERT_TRUE(p.status_update.has_value());
  EXPECT_EQ(p.status_update->annotation(kRevisionAnnotation), "1");
  DeploymentStatus st = StatusOf(p);
  EXPECT_EQ(st.observed_generation, 1);
  EXPECT_EQ(ConditionOf(st, kProgressing), "True/NewReplicaSetCreated");
  EXPECT_EQ(ConditionOf(st, kAvailable), "False/MinimumReplicasUnavailable");
}

TEST(DeploymentDecideTest, HashIsStableAndCollisionCountChangesIt) {
  api::ObjectPtr d = MakeDeployment({});
  EXPECT_EQ(Decide(Snap(d, {})).actions[0].object.name(),
            Decide(Snap(d, {})).actions[0].object.name());
  api::ObjectPtr collided = MakeDeployment({.status = json::object{{"collisionCount", 1}}});
  EXPECT_NE(Decide(Snap(collided, {})).actions[0].object.name(), RsName("nginx:1"));
}

TEST(DeploymentDecideTest, SteadyStateWritesNothing) {
  api::ObjectPtr d = MakeDeployment({.replicas = 3});
  std::vector<api::ObjectPtr> rss{MakeOwnedReplicaSet(*d, {.replicas = 3})};
  Plan first = Decide(Snap(d, rss));
  EXPECT_TRUE(first.actions.empty());
  ASSERT_TRUE(first.status_update.has_value()) << "the status was never written";
  DeploymentStatus st = StatusOf(first);
  EXPECT_EQ(st.replicas, 3);
  EXPECT_EQ(st.updated_replicas, 3);
  EXPECT_EQ(st.available_replicas, 3);
  EXPECT_EQ(st.unavailable_replicas, 0);
  EXPECT_EQ(ConditionOf(st, kAvailable), "True/MinimumReplicasAvailable");
  EXPECT_EQ(ConditionOf(st, kProgressing), "True/NewReplicaSetAvailable");
  // The server now holds that status; later syncs (even much later) change nothing.
  auto written = std::make_shared<const api::Object>(*first.status_update);
  for (int later : {1000, 5000, 100000}) {
    Plan again = Decide(Snap(written, rss, later));
    EXPECT_TRUE(again.actions.empty()) << later;
    EXPECT_FALSE(again.status_update.has_value()) << later << ": no write when nothing changed";
    EXPECT_FALSE(again.requeue_after.has_value()) << later;
  }
}

TEST(DeploymentDecideTest, ObservedGenerationFollowsTheSpec) {
  api::ObjectPtr d = MakeDeployment({.generation = 7});
  Plan p = Decide(Snap(d, {MakeOwnedReplicaSet(*d, {})}));
  EXPECT_EQ(StatusOf(p).observed_generation, 7);
}

TEST(DeploymentDecideTest, TemplateChangeStartsARollingUpdateWithinTheLimits) {
  struct Case {
    const char* name;
    int64_t replicas;
    json::value surge, unavailable;
    std::vector<std::string> want;  // actions: new ReplicaSet first, then old
  } cases[] = {
      // 3 replicas, 25%/25%: surge 1, unavailable 0 → one new pod, nothing old goes yet.
      {"defaults at 3", 3, "25%", "25%", {"create NEW 1"}},
      // 10 replicas: surge 3, unavailable 2 → 3 new, and 2 old may go at once.
      {"defaults at 10", 10, "25%", "25%", {"create NEW 3", "update OLD 8"}},
      // maxSurge 0: nothing new until an old pod went; maxUnavailable 1 lets one go.
      {"no surge", 4, 0, 1, {"create NEW 0", "update OLD 3"}},
      // Surge 100%: the whole new set at once, old kept until it is available.
      {"blue-green", 4, "100%", 0, {"create NEW 4"}},
  };
  for (const Case& c : cases) {
    api::ObjectPtr d = MakeDeployment({.replicas = c.replicas,
                                       .image = "nginx:2",
                                       .max_surge = c.surge,
                                       .max_unavailable = c.unavailable});
    api::ObjectPtr old = MakeOwnedReplicaSet(
        *d, {.replicas = c.replicas, .status_replicas = c.replicas, .available = c.replicas});
    Plan p = Decide(Snap(d, {old}));
    std::vector<std::string> want;
    for (std::string w : c.want) {
      if (size_t at = w.find("NEW"); at != std::string::npos) w.replace(at, 3, RsName("nginx:2"));
      if (size_t at = w.find("OLD"); at != std::string::npos) w.replace(at, 3, RsName("nginx:1"));
      want.push_back(w);
    }
    EXPECT_EQ(Actions(p), want) << c.name;
    const ReplicaSetAction* created = ActionOn(p, RsName("nginx:2"));
    ASSERT_NE(created, nullptr) << c.name;
    EXPECT_EQ(created->object.annotation(kRevisionAnnotation), "2") << c.name;
    EXPECT_EQ(p.status_update->annotation(kRevisionAnnotation), "2") << c.name;
  }
}

TEST(DeploymentDecideTest, ScaleDownEventsAndOrder) {
  api::ObjectPtr d = MakeDeployment({.replicas = 10, .image = "nginx:2"});
  api::ObjectPtr old =
      MakeOwnedReplicaSet(*d, {.replicas = 10, .status_replicas = 10, .available = 10});
  Plan p = Decide(Snap(d, {old}));
  EXPECT_EQ(
      Events(p),
      (std::vector<std::string>{
          "ScalingReplicaSet: Scaled up replica set " + RsName("nginx:2") + " from 0 to 3",
          "ScalingReplicaSet: Scaled down replica set " + RsName("nginx:1") + " from 10 to 8"}));
}

// The world a Deployment controller acts on, reduced to numbers: each ReplicaSet's spec, its pods
// and how many are available. Pods appear and disappear as soon as the ReplicaSet controller
// sees the spec (same step); a new pod becomes available `ready_lag` steps after it appeared.
class World {
 public:
  World(api::ObjectPtr d) : d_(std::move(d)) {}

  void AddReplicaSet(api::ObjectPtr rs) { rss_.push_back(std::move(rs)); }
  void SetDeployment(api::ObjectPtr d) { d_ = std::move(d); }

  // One controller sync: applies the plan to the ReplicaSets and the status to the Deployment.
  Plan Sync(int now) {
    Plan p = Decide(Snap(d_, rss_, now));
    for (const ReplicaSetAction& a : p.actions) {
      auto obj = std::make_shared<const api::Object>(a.object);
      auto it = std::find_if(rss_.begin(), rss_.end(),
                             [&](const api::ObjectPtr& r) { return r->name() == a.object.name(); });
      switch (a.kind) {
        case ReplicaSetAction::Kind::kCreate: {
          api::Object created = a.object;
          created.set_uid("uid-" + std::string(a.object.name()));
          created.mutable_metadata()["creationTimestamp"] = util::FormatRfc3339(testing::At(now));
          rss_.push_back(std::make_shared<const api::Object>(std::move(created)));
          break;
        }
        case ReplicaSetAction::Kind::kUpdate: *it = obj; break;
        case ReplicaSetAction::Kind::kDelete: rss_.erase(it); break;
      }
    }
    if (p.status_update) d_ = std::make_shared<const api::Object>(*p.status_update);
    return p;
  }

  // The ReplicaSet controller and the pods catch up: pods follow spec; `ready` of the pods that
  // are not yet available become available.
  // Each ReplicaSet catches up only when `catch_up()` says so: ReplicaSet controllers lag.
  void Pods(int64_t ready, const std::function<bool()>& catch_up) {
    for (api::ObjectPtr& rs : rss_) {
      if (!catch_up()) continue;
      api::Object next = *rs;
      int64_t spec = Replicas(next);
      int64_t have = api::FindInt(next.doc(), {"status", "replicas"});
      int64_t avail = api::FindInt(next.doc(), {"status", "availableReplicas"});
      // Scaling down removes unavailable pods first (the ReplicaSet controller's ranking); new
      // pods start unavailable.
      if (spec < have) {
        int64_t remove = have - spec;
        avail -= remove - std::min(remove, have - avail);
      }
      avail = std::min(avail, spec);
      avail += std::min(ready, spec - avail);
      int64_t pods = spec;
      next.mutable_doc()["status"] = json::object{{"replicas", pods},
                                                  {"readyReplicas", avail},
                                                  {"availableReplicas", avail},
                                                  {"observedGeneration", next.generation()}};
      rs = std::make_shared<const api::Object>(std::move(next));
    }
  }

  // Pods that exist now (the model's pods are what status reports).
  int64_t TotalPods() const {
    int64_t n = 0;
    for (const api::ObjectPtr& rs : rss_) n += api::FindInt(rs->doc(), {"status", "replicas"});
    return n;
  }
  // Pods that exist now or will once every ReplicaSet controller caught up with its spec.
  int64_t CommittedPods() const {
    int64_t n = 0;
    for (const api::ObjectPtr& rs : rss_) {
      n += std::max(Replicas(*rs), api::FindInt(rs->doc(), {"status", "replicas"}));
    }
    return n;
  }
  int64_t Available() const {
    int64_t n = 0;
    for (const api::ObjectPtr& rs : rss_) {
      n += api::FindInt(rs->doc(), {"status", "availableReplicas"});
    }
    return n;
  }
  const std::vector<api::ObjectPtr>& replica_sets() const { return rss_; }
  const api::Object& deployment() const { return *d_; }

 private:
  api::ObjectPtr d_;
  std::vector<api::ObjectPtr> rss_;
};

TEST(DeploymentDecideTest, RollingUpdateConvergesWithinTheLimitsAtEveryStep) {
  struct Case {
    int64_t replicas;
    json::value surge, unavailable;
  } cases[] = {{10, "25%", "25%"}, {3, "25%", "25%"}, {5, 0, 1},     {5, 2, 0},
               {4, "50%", "50%"},  {1, 1, 0},         {7, "30%", 2}, {2, 0, "100%"}};
  std::mt19937 rng(42);
  for (const Case& c : cases) {
    for (int trial = 0; trial < 5; ++trial) {
      DeploymentSpec spec{
          .replicas = c.replicas, .max_surge = c.surge, .max_unavailable = c.unavailable};
      api::ObjectPtr d1 = MakeDeployment(spec);
      World w(d1);
      w.AddReplicaSet(MakeOwnedReplicaSet(
          *d1, {.replicas = c.replicas, .status_replicas = c.replicas, .available = c.replicas}));
      spec.image = "nginx:2";
      spec.generation = 2;
      api::ObjectPtr d2 = MakeDeployment(spec);
      w.SetDeployment(d2);
      int64_t surge = MaxSurge(*d2), unavailable = MaxUnavailable(*d2);
      std::string label = std::to_string(c.replicas) + " " + json::serialize(c.surge) + "/" +
                          json::serialize(c.unavailable) + " trial " + std::to_string(trial);
      bool done = false;
      for (int step = 0; step < 200 && !done; ++step) {
        w.Sync(1000 + step);
        ASSERT_LE(w.CommittedPods(), c.replicas + surge) << label << " step " << step;
        w.Pods(std::uniform_int_distribution<int64_t>(0, 2)(rng), [&] { return rng() % 2 == 0; });
        ASSERT_LE(w.TotalPods(), c.replicas + surge) << label << " step " << step;
        ASSERT_LE(w.CommittedPods(), c.replicas + surge) << label << " step " << step;
        ASSERT_GE(w.Available(), c.replicas - unavailable) << label << " step " << step;
        DeploymentStatus st = DeploymentStatus::FromObject(w.deployment());
        done = st.updated_replicas == c.replicas && st.replicas == c.replicas &&
               st.available_replicas == c.replicas;
      }
      ASSERT_TRUE(done) << label << ": the rollout never completed";
      for (const api::ObjectPtr& rs : w.replica_sets()) {
        int64_t want = rs->name() == RsName("nginx:2") ? c.replicas : 0;
        EXPECT_EQ(Replicas(*rs), want) << label << " " << rs->name();
      }
      DeploymentStatus st = DeploymentStatus::FromObject(w.deployment());
      EXPECT_EQ(ConditionOf(st, kProgressing), "True/NewReplicaSetAvailable") << label;
      EXPECT_EQ(st.observed_generation, 2) << label;
    }
  }
}

TEST(DeploymentDecideTest, RecreateScalesOldToZeroAndWaitsForItsPods) {
  api::ObjectPtr d = MakeDeployment({.replicas = 3, .image = "nginx:2", .strategy = "Recreate"});
  api::ObjectPtr old = MakeOwnedReplicaSet(*d, {.replicas = 3});
  Plan p = Decide(Snap(d, {old}));
  EXPECT_EQ(Actions(p), (std::vector<std::string>{"update " + RsName("nginx:1") + " 0"}))
      << "no new ReplicaSet while old pods run";

  // Scaled to 0 but a pod is still running: wait.
  api::ObjectPtr drained =
      MakeOwnedReplicaSet(*d, {.replicas = 0, .status_replicas = 0, .available = 0, .desired = 3});
  Snapshot s = Snap(d, {drained});
  s.pods_by_replica_set[std::string(drained->uid())] = {
      controllers::testing::MakePod({.name = "old-pod"})};
  EXPECT_TRUE(Decide(s).actions.empty());

  // Its pods are gone (or terminal): the new ReplicaSet gets every replica at once.
  s.pods_by_replica_set[std::string(drained->uid())] = {
      controllers::testing::MakePod({.name = "old-pod", .phase = "Succeeded"})};
  EXPECT_EQ(Actions(Decide(s)), (std::vector<std::string>{"create " + RsName("nginx:2") + " 3"}));
}

TEST(DeploymentDecideTest, PausedDeploymentDoesNotRollOut) {
  api::ObjectPtr d = MakeDeployment({.image = "nginx:2", .paused = true});
  Plan p = Decide(Snap(d, {MakeOwnedReplicaSet(*d, {})}));
  EXPECT_TRUE(p.actions.empty()) << "no new ReplicaSet while paused";
  EXPECT_EQ(ConditionOf(StatusOf(p), kProgressing), "Unknown/DeploymentPaused");

  // Resumed: the condition says so, and the rollout starts.
  api::ObjectPtr resumed = MakeDeployment(
      {.image = "nginx:2", .status = p.status_update->doc().at("status").as_object()});
  Plan q = Decide(Snap(resumed, {MakeOwnedReplicaSet(*d, {})}));
  EXPECT_EQ(Actions(q), (std::vector<std::string>{"create " + RsName("nginx:2") + " 1"}));
  EXPECT_EQ(ConditionOf(StatusOf(q), kProgressing), "True/NewReplicaSetCreated");
}

TEST(DeploymentDecideTest, PausedDeploymentStillScales) {
  api::ObjectPtr d = MakeDeployment({.replicas = 5, .paused = true});
  Plan p = Decide(Snap(d, {MakeOwnedReplicaSet(*d, {.replicas = 3})}));
  EXPECT_EQ(Actions(p), (std::vector<std::string>{"update " + RsName("nginx:1") + " 5"}));
}

TEST(DeploymentDecideTest, ScalingEventResizesTheOnlyReplicaSet) {
  api::ObjectPtr d = MakeDeployment({.replicas = 5});
  Plan p = Decide(Snap(d, {MakeOwnedReplicaSet(*d, {.replicas = 3})}));
  ASSERT_EQ(Actions(p), (std::vector<std::string>{"update " + RsName("nginx:1") + " 5"}));
  EXPECT_EQ(p.actions[0].object.annotation(kDesiredReplicasAnnotation), "5");
  EXPECT_EQ(p.actions[0].object.annotation(kMaxReplicasAnnotation), "7");  // 5 + ceil(1.25)
  EXPECT_EQ(Events(p), (std::vector<std::string>{"ScalingReplicaSet: Scaled up replica set " +
                                                 RsName("nginx:1") + " from 3 to 5"}));
  // And down to zero.
  api::ObjectPtr zero = MakeDeployment({.replicas = 0});
  EXPECT_EQ(Actions(Decide(Snap(zero, {MakeOwnedReplicaSet(*d, {.replicas = 3})}))),
            (std::vector<std::string>{"update " + RsName("nginx:1") + " 0"}));
}

TEST(DeploymentDecideTest, ResizeDuringARolloutIsProportional) {
  // Mid-rollout at 10 replicas (maxSurge 3): old 8, new 5, both annotated desired 10 / max 13.
  api::ObjectPtr d = MakeDeployment({.replicas = 20, .image = "nginx:2"});
  api::ObjectPtr old = MakeOwnedReplicaSet(
      *d, {.replicas = 8, .status_replicas = 8, .available = 8, .desired = 10, .max = 13});
  api::ObjectPtr cur = MakeOwnedReplicaSet(*d, {.image = "nginx:2",
                                                .replicas = 5,
                                                .status_replicas = 5,
                                                .available = 3,
                                                .revision = 2,
                                                .created = 10,
                                                .desired = 10,
                                                .max = 13});
  Plan p = Decide(Snap(d, {old, cur}));
  std::vector<std::string> actions = Actions(p);
  std::sort(actions.begin(), actions.end());
  std::vector<std::string> want{"update " + RsName("nginx:1") + " 15",
                                "update " + RsName("nginx:2") + " 10"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(actions, want);
  for (const ReplicaSetAction& a : p.actions) {
    EXPECT_EQ(a.object.annotation(kDesiredReplicasAnnotation), "20");
    EXPECT_EQ(a.object.annotation(kMaxReplicasAnnotation), "25");
  }
}

TEST(DeploymentDecideTest, RevisionHistoryLimitDeletesTheOldestEmptyReplicaSets) {
  api::ObjectPtr d = MakeDeployment({.image = "nginx:5", .revision_history_limit = 2});
  std::vector<api::ObjectPtr> rss;
  for (int r = 1; r <= 4; ++r) {
    rss.push_back(MakeOwnedReplicaSet(*d, {.image = "nginx:v" + std::to_string(r),
                                           .replicas = 0,
                                           .status_replicas = 0,
                                           .available = 0,
                                           .revision = r,
                                           .created = r}));
  }
  rss.push_back(MakeOwnedReplicaSet(*d, {.image = "nginx:5", .revision = 5, .created = 5}));
  // The current status says the rollout is complete (cleanup waits for that).
  api::ObjectPtr complete = MakeDeployment({.image = "nginx:5",
                                            .revision_history_limit = 2,
                                            .status = json::object{{"observedGeneration", 1},
                                                                   {"replicas", 3},
                                                                   {"updatedReplicas", 3},
                                                                   {"readyReplicas", 3},
                                                                   {"availableReplicas", 3}}});
  Plan p = Decide(Snap(complete, rss));
  EXPECT_EQ(Actions(p), (std::vector<std::string>{"delete " + RsName("nginx:v1"),
                                                  "delete " + RsName("nginx:v2")}));
  // A ReplicaSet that still has pods is never deleted, whatever its age.
  rss[0] = MakeOwnedReplicaSet(*d, {.image = "nginx:v1",
                                    .replicas = 0,
                                    .status_replicas = 1,
                                    .available = 0,
                                    .revision = 1,
                                    .created = 1});
  EXPECT_EQ(Actions(Decide(Snap(complete, rss))),
            (std::vector<std::string>{"delete " + RsName("nginx:v2")}));
}

TEST(DeploymentDecideTest, RollbackReusesTheOldReplicaSetWithTheNextRevision) {
  // Revision 1 ran nginx:1, revision 2 runs nginx:2; `kubectl rollout undo` copied revision 1's
  // template back into the Deployment.
  api::ObjectPtr d = MakeDeployment({.image = "nginx:1",
                                     .generation = 3,
                                     .annotations = {{std::string(kRevisionAnnotation), "2"}}});
  api::ObjectPtr r1 = MakeOwnedReplicaSet(
      *d, {.replicas = 0, .status_replicas = 0, .available = 0, .revision = 1, .desired = 3});
  api::ObjectPtr r2 = MakeOwnedReplicaSet(*d, {.image = "nginx:2", .revision = 2, .created = 10});
  Plan p = Decide(Snap(d, {r1, r2}));
  const ReplicaSetAction* back = ActionOn(p, RsName("nginx:1"));
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->kind, ReplicaSetAction::Kind::kUpdate) << "no new ReplicaSet for an old template";
  EXPECT_EQ(back->object.annotation(kRevisionAnnotation), "3");
  EXPECT_EQ(back->object.annotation(kRevisionHistoryAnnotation), "1");
  EXPECT_EQ(Replicas(back->object), 1) << "grows within maxSurge like any new ReplicaSet";
  EXPECT_EQ(p.status_update->annotation(kRevisionAnnotation), "3");

  // Rolling back again appends to the history.
  api::ObjectPtr r1_again = MakeOwnedReplicaSet(*d, {.replicas = 0,
                                                     .status_replicas = 0,
                                                     .available = 0,
                                                     .revision = 3,
                                                     .desired = 3,
                                                     .revision_history = "1"});
  api::ObjectPtr r2_newer =
      MakeOwnedReplicaSet(*d, {.image = "nginx:2", .revision = 4, .created = 10});
  Plan q = Decide(Snap(d, {r1_again, r2_newer}));
  const ReplicaSetAction* back2 = ActionOn(q, RsName("nginx:1"));
  ASSERT_NE(back2, nullptr);
  EXPECT_EQ(back2->object.annotation(kRevisionAnnotation), "5");
  EXPECT_EQ(back2->object.annotation(kRevisionHistoryAnnotation), "1,3");
}

TEST(DeploymentDecideTest, ProgressDeadline) {
  // A rollout stuck since t=100: the new ReplicaSet has 1 of 3 pods available and nothing moves.
  json::object stuck_status{
      {"observedGeneration", 1},
      {"replicas", 4},
      {"updatedReplicas", 1},
      {"readyReplicas", 3},
      {"availableReplicas", 3},
      {"unavailableReplicas", 1},
      {"conditions",
       json::array{json::object{{"type", "Progressing"},
                                {"status", "True"},
                                {"reason", "ReplicaSetUpdated"},
                                {"message", "ReplicaSet is progressing."},
                                {"lastUpdateTime", util::FormatRfc3339(testing::At(100))},
                                {"lastTransitionTime", util::FormatRfc3339(testing::At(100))}},
                   json::object{{"type", "Available"},
                                {"status", "True"},
                                {"reason", "MinimumReplicasAvailable"},
                                {"message", "Deployment has minimum availability."},
                                {"lastUpdateTime", util::FormatRfc3339(testing::At(100))},
                                {"lastTransitionTime", util::FormatRfc3339(testing::At(100))}}}}};
  api::ObjectPtr d = MakeDeployment({.image = "nginx:2",
                                     .status = stuck_status,
                                     .annotations = {{std::string(kRevisionAnnotation), "2"}}});
  std::vector<api::ObjectPtr> rss{MakeOwnedReplicaSet(*d, {.replicas = 3}),
                                  MakeOwnedReplicaSet(*d, {.image = "nginx:2",
                                                           .replicas = 1,
                                                           .status_replicas = 1,
                                                           .available = 0,
                                                           .revision = 2,
                                                           .created = 100,
                                                           .desired = 3})};
  // Before the deadline (600 s after t=100): nothing to write, a check scheduled after it.
  Plan early = Decide(Snap(d, rss, 400));
  EXPECT_TRUE(early.actions.empty());
  EXPECT_FALSE(early.status_update.has_value());
  ASSERT_TRUE(early.requeue_after.has_value());
  EXPECT_EQ(*early.requeue_after, std::chrono::seconds(301));
  // After it: Progressing False ProgressDeadlineExceeded; Available stays as it is.
  Plan late = Decide(Snap(d, rss, 701));
  DeploymentStatus st = StatusOf(late);
  EXPECT_EQ(ConditionOf(st, kProgressing), "False/ProgressDeadlineExceeded");
  EXPECT_EQ(FindCondition(st.conditions, kProgressing)->message,
            "ReplicaSet \"" + RsName("nginx:2") + "\" has timed out progressing.");
  EXPECT_EQ(ConditionOf(st, kAvailable), "True/MinimumReplicasAvailable");
  // Progress after the deadline brings it back.
  rss[1] = MakeOwnedReplicaSet(*d, {.image = "nginx:2",
                                    .replicas = 1,
                                    .status_replicas = 1,
                                    .available = 1,
                                    .revision = 2,
                                    .created = 100,
                                    .desired = 3});
  auto timed_out = std::make_shared<const api::Object>(*late.status_update);
  Plan moved = Decide(Snap(timed_out, rss, 800));
  EXPECT_EQ(ConditionOf(StatusOf(moved), kProgressing), "True/ReplicaSetUpdated");
}

TEST(DeploymentDecideTest, AvailableConditionFollowsMinimumAvailability) {
  // 4 replicas, maxUnavailable 25% = 1: 3 available is enough, 2 is not.
  api::ObjectPtr d = MakeDeployment({.replicas = 4});
  EXPECT_EQ(ConditionOf(StatusOf(Decide(Snap(
                            d, {MakeOwnedReplicaSet(
                                   *d, {.replicas = 4, .status_replicas = 4, .available = 3})}))),
                        kAvailable),
            "True/MinimumReplicasAvailable");
  EXPECT_EQ(ConditionOf(StatusOf(Decide(Snap(
                            d, {MakeOwnedReplicaSet(
                                   *d, {.replicas = 4, .status_replicas = 4, .available = 2})}))),
                        kAvailable),
            "False/MinimumReplicasUnavailable");
}

TEST(DeploymentDecideTest, ReplicaFailureIsCopiedFromTheReplicaSet) {
  api::ObjectPtr d = MakeDeployment({});
  api::Object rs = *MakeOwnedReplicaSet(*d, {.status_replicas = 0, .available = 0});
  rs.mutable_doc()["status"].as_object()["conditions"] =
      json::array{json::object{{"type", "ReplicaFailure"},
                               {"status", "True"},
                               {"reason", "FailedCreate"},
                               {"message", "pods \"web-x\" is forbidden: exceeded quota"},
                               {"lastTransitionTime", util::FormatRfc3339(testing::At(5))}}};
  Plan p = Decide(Snap(d, {std::make_shared<const api::Object>(rs)}));
  EXPECT_EQ(ConditionOf(StatusOf(p), kReplicaFailure), "True/FailedCreate");
}

TEST(DeploymentDecideTest, SelectingAllIsRefused) {
  api::Object d = *MakeDeployment({});
  d.mutable_doc()["spec"].as_object()["selector"] = json::object{};
  Plan p = Decide(Snap(std::make_shared<const api::Object>(d), {}));
  EXPECT_TRUE(p.actions.empty());
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0].reason, "SelectingAll");
  EXPECT_EQ(p.events[0].type, "Warning");
}

}  // namespace
}  // namespace converge::controllers::deployment
