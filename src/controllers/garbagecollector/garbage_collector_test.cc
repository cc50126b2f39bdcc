// The garbage collector's whole sync — graph, attemptToDelete, attemptToOrphan, live lookups,
// patches and deletes — against an in-memory cluster, one step at a time. The scenarios are
// upstream's garbage-collector conformance tests.
#include "controllers/garbagecollector/garbage_collector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "api/builtin_resources.h"
#include "controllers/garbagecollector/fake_cluster.h"

namespace converge::controllers::garbagecollector {
namespace {

namespace json = boost::json;
using K = FakeCluster;

class GarbageCollectorSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GarbageCollectorOptions o;
    o.client = &cluster_;
    o.clock = &clock_;
    o.metrics = &registry_;
    o.delete_queue_name = "";
    o.orphan_queue_name = "";
    gc_ = std::make_unique<GarbageCollector>(std::move(o));
    gc_->mapper().Add(api::BuiltinResources());
    gc_->TEST_StartDelayLoops();
  }

  // Feeds the cluster's changes to the collector and runs every queue until nothing is left,
  // stepping the fake clock over retry delays. Returns the number of steps taken.
  int Settle() {
    for (int steps = 0; steps < 20000; ++steps) {
      for (GraphEvent& e : cluster_.TakeEvents()) gc_->HandleEvent(std::move(e));
      if (gc_->TEST_ProcessGraphChange()) continue;
      if (gc_->TEST_ProcessAttemptToDelete()) continue;
      if (gc_->TEST_ProcessAttemptToOrphan()) continue;
      if (gc_->TEST_Waiting() > 0) {
        clock_.Step(std::chrono::seconds(1001));  // past the longest per-item backoff
        while (gc_->TEST_Waiting() > 0) std::this_thread::yield();
        continue;
      }
      return steps;
    }
    ADD_FAILURE() << "the collector never settled";
    return -1;
  }

  api::Object Pod(std::string name, std::vector<json::object> refs = {},
                  std::vector<std::string> finalizers = {}) {
    return cluster_.Create(K::Pods(), "ns", std::move(name), std::move(refs),
                           std::move(finalizers));
  }
  bool HasPod(const std::string& name) { return cluster_.Has(K::Pods(), {"ns", name}); }
  void Delete(const K::Kind& k, const api::Object& obj, std::string policy) {
    client::DeleteOptions o;
    o.propagation_policy = std::move(policy);
    o.precondition_uid = std::string(obj.uid());
    ASSERT_TRUE(cluster_.Delete(k.gvr, obj.key(), o).ok());
  }

  util::FakeClock clock_;
  util::Registry registry_;
  FakeCluster cluster_;
  std::unique_ptr<GarbageCollector> gc_;
};

// "should delete pods created by rc when not orphaning"
TEST_F(GarbageCollectorSyncTest, BackgroundDeletionDeletesDependents) {
  api::Object rs = cluster_.Create(K::ReplicaSets(), "ns", "rs");
  Pod("p1", {K::Ref(rs, true, true)});
  Pod("p2", {K::Ref(rs, true, true)});
  Pod("bystander");
  Settle();
  EXPECT_EQ(cluster_.deletes(), 0) << "nothing is garbage while the owner lives";

  Delete(K::ReplicaSets(), rs, "Background");
  Settle();
  EXPECT_FALSE(HasPod("p1"));
  EXPECT_FALSE(HasPod("p2"));
  EXPECT_TRUE(HasPod("bystander"));
  EXPECT_FALSE(gc_->GraphHasUid("uid-p1"));
  EXPECT_FALSE(gc_->GraphHasUid("uid-rs"));
}

// "should orphan pods created by rc if delete options say so"
TEST_F(GarbageCollectorSyncTest, OrphanDeletionReleasesDependents) {
  api::Object rs = cluster_.Create(K::ReplicaSets(), "ns", "rs");
  api::Object other = cluster_.Create(K::ReplicaSets(), "ns", "other");
  Pod("p1", {K::Ref(rs, true, true)});
  Pod("p2", {K::Ref(rs, true, true), K::Ref(other)});
  Settle();

  Delete(K::ReplicaSets(), rs, "Orphan");
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ReplicaSets(), {"ns", "rs"})) << "finalizer removed, owner gone";
  ASSERT_TRUE(HasPod("p1"));
  ASSERT_TRUE(HasPod("p2"));
  EXPECT_EQ(cluster_.Read(K::Pods(), {"ns", "p1"})->owner_references(), nullptr);
  std::optional<api::Object> p2 = cluster_.Read(K::Pods(), {"ns", "p2"});
  const json::array* refs = api::FindArray(p2->doc(), {"metadata", "ownerReferences"});
  ASSERT_NE(refs, nullptr);
  ASSERT_EQ(refs->size(), 1u);
  EXPECT_EQ(api::Object::GetString(refs->at(0).as_object(), "uid"), "uid-other");
  EXPECT_EQ(cluster_.deletes(), 1) << "only the user's delete";
}

// "should keep the rc around until all its pods are deleted if the deleteOptions says so"
TEST_F(GarbageCollectorSyncTest, ForegroundDeletionKeepsTheOwnerUntilDependentsAreGone) {
  api::Object rs = cluster_.Create(K::ReplicaSets(), "ns", "rs");
  Pod("p1", {K::Ref(rs, true, true)});
  // A dependent that lingers (a finalizer of someone else's) keeps the owner.
  api::Object p2 = Pod("p2", {K::Ref(rs, true, true)}, {"example.com/hold"});
  Settle();

  Delete(K::ReplicaSets(), rs, "Foreground");
  Settle();
  EXPECT_FALSE(HasPod("p1"));
  std::optional<api::Object> held = cluster_.Read(K::Pods(), {"ns", "p2"});
  ASSERT_TRUE(held);
  EXPECT_TRUE(held->being_deleted());
  std::optional<api::Object> owner = cluster_.Read(K::ReplicaSets(), {"ns", "rs"});
  ASSERT_TRUE(owner) << "the owner waits for its blocking dependents";
  EXPECT_TRUE(owner->HasFinalizer("foregroundDeletion"));

  // The other party finishes: the dependent goes, then the owner.
  ASSERT_TRUE(
      cluster_.MergePatch(K::Pods().gvr, {"ns", "p2"}, R"({"metadata":{"finalizers":null}})").ok());
  Settle();
  EXPECT_FALSE(HasPod("p2"));
  EXPECT_FALSE(cluster_.Has(K::ReplicaSets(), {"ns", "rs"}));
}

TEST_F(GarbageCollectorSyncTest, ForegroundDoesNotWaitForNonBlockingDependents) {
  api::Object rs = cluster_.Create(K::ReplicaSets(), "ns", "rs");
  Pod("lingering", {K::Ref(rs, /*block=*/false)}, {"example.com/hold"});
  Settle();
  Delete(K::ReplicaSets(), rs, "Foreground");
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ReplicaSets(), {"ns", "rs"}));
  std::optional<api::Object> p = cluster_.Read(K::Pods(), {"ns", "lingering"});
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->being_deleted()) << "deleted, but not waited for";
}

// "should not delete dependents that have both valid owner and owner that's waiting for
// dependents to be deleted"
TEST_F(GarbageCollectorSyncTest, DependentsWithAnotherValidOwnerSurviveForeground) {
  api::Object doomed = cluster_.Create(K::ReplicaSets(), "ns", "to-be-deleted");
  api::Object stays = cluster_.Create(K::ReplicaSets(), "ns", "to-stay");
  for (int i = 0; i < 6; ++i) {
    std::vector<json::object> refs = {K::Ref(doomed, true, true)};
    if (i % 2 == 0) refs.push_back(K::Ref(stays));
    Pod("p" + std::to_string(i), refs);
  }
  Settle();
  Delete(K::ReplicaSets(), doomed, "Foreground");
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ReplicaSets(), {"ns", "to-be-deleted"}));
  for (int i = 0; i < 6; ++i) {
    std::string name = "p" + std::to_string(i);
    SCOPED_TRACE(name);
    std::optional<api::Object> p = cluster_.Read(K::Pods(), {"ns", name});
    if (i % 2 != 0) {
      EXPECT_FALSE(p);
      continue;
    }
    ASSERT_TRUE(p);
    EXPECT_FALSE(p->being_deleted());
    ASSERT_NE(p->owner_references(), nullptr);
    ASSERT_EQ(p->owner_references()->size(), 1u);
    EXPECT_EQ(api::Object::GetString(p->owner_references()->at(0).as_object(), "uid"),
              "uid-to-stay");
  }
}

// "should not be blocked by dependency circle"
TEST_F(GarbageCollectorSyncTest, DependencyCycleDoesNotBlockForegroundDeletion) {
  // pod1 ← pod3, pod2 ← pod1, pod3 ← pod2, every reference blocking. Created first without
  // references, then patched, as upstream's test does.
  api::Object p1 = Pod("pod1");
  api::Object p2 = Pod("pod2");
  api::Object p3 = Pod("pod3");
  auto link = [&](const api::Object& dep, const api::Object& owner) {
    json::object patch;
    json::array refs;
    refs.push_back(K::Ref(owner, true, true));
    patch["metadata"] = json::object{{"ownerReferences", std::move(refs)}};
    ASSERT_TRUE(cluster_.MergePatch(K::Pods().gvr, dep.key(), json::serialize(patch)).ok());
  };
  link(p1, p3);
  link(p2, p1);
  link(p3, p2);
  Settle();
  EXPECT_EQ(cluster_.deletes(), 0);

  Delete(K::Pods(), p1, "Foreground");
  Settle();
  EXPECT_FALSE(HasPod("pod1"));
  EXPECT_FALSE(HasPod("pod2"));
  EXPECT_FALSE(HasPod("pod3"));
}

TEST_F(GarbageCollectorSyncTest, DanglingOwnersAreCollectedOnlyWhenNoOwnerIsValid) {
  api::Object rs = cluster_.Create(K::ReplicaSets(), "ns", "rs");
  json::object ghost{
      {"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "ghost"}, {"uid", "uid-ghost"}};
  cluster_.Create(K::ConfigMaps(), "ns", "orphaned", {ghost});
  cluster_.Create(K::ConfigMaps(), "ns", "half", {ghost, K::Ref(rs)});
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ConfigMaps(), {"ns", "orphaned"}));
  std::optional<api::Object> half = cluster_.Read(K::ConfigMaps(), {"ns", "half"});
  ASSERT_TRUE(half);
  ASSERT_EQ(half->owner_references()->size(), 1u) << "the dangling reference is dropped";
  EXPECT_EQ(api::Object::GetString(half->owner_references()->at(0).as_object(), "uid"), "uid-rs");
  EXPECT_FALSE(gc_->GraphHasUid("uid-ghost")) << "the virtual owner left the graph";
}

TEST_F(GarbageCollectorSyncTest, ReplacedOwnerWithTheSameNameIsNotTheOwner) {
  // The reference names an earlier incarnation of "rs"; the live "rs" has another uid.
  cluster_.Create(K::ReplicaSets(), "ns", "rs", {}, {}, "uid-rs-2");
  json::object old_rs{
      {"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "rs"}, {"uid", "uid-rs-1"}};
  cluster_.Create(K::ConfigMaps(), "ns", "cm", {old_rs});
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ConfigMaps(), {"ns", "cm"}));
  EXPECT_TRUE(cluster_.Has(K::ReplicaSets(), {"ns", "rs"}));
  EXPECT_FALSE(gc_->GraphHasUid("uid-rs-1"));
  EXPECT_TRUE(gc_->GraphHasUid("uid-rs-2"));
}

TEST_F(GarbageCollectorSyncTest, ClusterScopedOwnersOwnNamespacedObjects) {
  api::Object role = cluster_.Create(K::ClusterRoles(), "", "role");
  cluster_.Create(K::ConfigMaps(), "a", "cm", {K::Ref(role)}, {}, "uid-a-cm");
  cluster_.Create(K::ConfigMaps(), "b", "cm", {K::Ref(role)}, {}, "uid-b-cm");
  Settle();
  EXPECT_TRUE(cluster_.Has(K::ConfigMaps(), {"a", "cm"}));
  EXPECT_TRUE(cluster_.Has(K::ConfigMaps(), {"b", "cm"}));
  Delete(K::ClusterRoles(), role, "Background");
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ConfigMaps(), {"a", "cm"}));
  EXPECT_FALSE(cluster_.Has(K::ConfigMaps(), {"b", "cm"}));
}

TEST_F(GarbageCollectorSyncTest, NamespacedOwnerInAnotherNamespaceDoesNotOwn) {
  api::Object rs = cluster_.Create(K::ReplicaSets(), "a", "rs");
  cluster_.Create(K::ConfigMaps(), "b", "cm", {K::Ref(rs)}, {}, "uid-b-cm");
  cluster_.Create(K::ConfigMaps(), "a", "cm", {K::Ref(rs)}, {}, "uid-a-cm");
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ConfigMaps(), {"b", "cm"}))
      << "owners are looked up in the dependent's namespace";
  EXPECT_TRUE(cluster_.Has(K::ConfigMaps(), {"a", "cm"}));
}

TEST_F(GarbageCollectorSyncTest, ClusterScopedDependentOfANamespacedKindIsLeftAlone) {
  json::object rs{
      {"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "rs"}, {"uid", "uid-rs"}};
  cluster_.Create(K::ClusterRoles(), "", "role", {rs});
  Settle();
  EXPECT_TRUE(cluster_.Has(K::ClusterRoles(), {"", "role"}))
      << "an invalid reference is not a dangling one";
}

TEST_F(GarbageCollectorSyncTest, OwnerReferencesToUnknownKindsAreRetriedNotCollected) {
  json::object widget{
      {"apiVersion", "example.com/v1"}, {"kind", "Widget"}, {"name", "w"}, {"uid", "uid-w"}};
  cluster_.Create(K::ConfigMaps(), "ns", "cm", {widget});
  for (GraphEvent& e : cluster_.TakeEvents()) gc_->HandleEvent(std::move(e));
  for (int i = 0; i < 20; ++i) {
    (void)gc_->TEST_ProcessGraphChange();
    (void)gc_->TEST_ProcessAttemptToDelete();
  }
  EXPECT_TRUE(cluster_.Has(K::ConfigMaps(), {"ns", "cm"}));
  EXPECT_GT(gc_->TEST_Waiting(), 0) << "the unmappable owner is retried with backoff";
  // The kind becomes known (a CRD was installed); the owner does not exist: collected.
  gc_->mapper().Add({"example.com", "v1", "widgets"}, "Widget", true);
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ConfigMaps(), {"ns", "cm"}));
}

TEST_F(GarbageCollectorSyncTest, StartsFromExistingStateAfterARestart) {
  // State left behind by a collector that stopped mid-way: an owner marked for orphaning, and a
  // foreground owner whose only dependent is already gone.
  api::Object orphaner = cluster_.Create(K::ReplicaSets(), "ns", "orphaner", {}, {"orphan"});
  Pod("kept", {K::Ref(orphaner, true, true)});
  api::Object fg = cluster_.Create(K::ReplicaSets(), "ns", "fg", {}, {"foregroundDeletion"});
  ASSERT_TRUE(cluster_.Delete(K::ReplicaSets().gvr, orphaner.key(), {}).ok());
  ASSERT_TRUE(cluster_.Delete(K::ReplicaSets().gvr, fg.key(), {}).ok());
  (void)cluster_.TakeEvents();  // nobody was listening
  // A new collector starts from the informers' initial lists.
  for (GraphEvent& e : cluster_.SnapshotEvents()) gc_->HandleEvent(std::move(e));
  Settle();
  EXPECT_FALSE(cluster_.Has(K::ReplicaSets(), {"ns", "orphaner"}));
  EXPECT_FALSE(cluster_.Has(K::ReplicaSets(), {"ns", "fg"}));
  ASSERT_TRUE(HasPod("kept"));
  EXPECT_EQ(cluster_.Read(K::Pods(), {"ns", "kept"})->owner_references(), nullptr);
}

}  // namespace
}  // namespace converge::controllers::garbagecollector
