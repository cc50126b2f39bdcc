#include "controllers/garbagecollector/owner_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace converge::controllers::garbagecollector {
namespace {

namespace json = boost::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

struct Obj {
  std::string kind = "ConfigMap";
  std::string api_version = "v1";
  std::string name;
  std::string ns = "ns";
  std::vector<json::object> refs;
  std::vector<std::string> finalizers;
  bool deleting = false;
};

api::ObjectPtr Make(const Obj& o) {
  api::Object obj;
  obj.mutable_doc()["apiVersion"] = o.api_version;
  obj.mutable_doc()["kind"] = o.kind;
  obj.set_name(o.name);
  if (!o.ns.empty()) obj.set_namespace(o.ns);
  obj.set_uid(o.name);  // uid = name keeps the tables readable
  if (!o.refs.empty()) {
    json::array a;
    for (const auto& r : o.refs) a.push_back(r);
    obj.mutable_metadata()["ownerReferences"] = std::move(a);
  }
  for (const auto& f : o.finalizers) obj.AddFinalizer(f);
  if (o.deleting) obj.mutable_metadata()["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  return std::make_shared<const api::Object>(std::move(obj));
}

json::object RefTo(std::string name, bool block = false, std::string kind = "ConfigMap",
                   std::string api_version = "v1") {
  json::object r{{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", name}};
  if (block) r["blockOwnerDeletion"] = true;
  return r;
}

GraphEvent Add(const Obj& o) {
  return {.type = GraphEventType::kAdd, .object = Make(o)};
}
GraphEvent Update(const Obj& old_o, const Obj& o) {
  return {.type = GraphEventType::kUpdate, .object = Make(o), .old_object = Make(old_o)};
}
GraphEvent Delete(const Obj& o) {
  return {.type = GraphEventType::kDelete, .object = Make(o)};
}
GraphEvent VirtualDelete(ObjectIdentity id) {
  return {.type = GraphEventType::kDelete, .is_virtual = true, .virtual_identity = std::move(id)};
}

TEST(OwnerGraphTest, DependentBeforeOwnerMakesAVirtualOwnerToVerify) {
  OwnerGraph g;
  GraphActions a = g.Process(Add({.name = "child", .refs = {RefTo("parent")}}));
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("parent"));
  const Node* parent = g.Find("parent");
  ASSERT_NE(parent, nullptr);
  EXPECT_FALSE(parent->observed);
  EXPECT_EQ(parent->identity.ns, "ns") << "a virtual owner takes the dependent's namespace";
  EXPECT_THAT(parent->DependentUids(), ElementsAre("child"));

  a = g.Process(Add({.name = "parent"}));
  EXPECT_TRUE(g.Find("parent")->observed);
  EXPECT_THAT(a.attempt_to_delete, IsEmpty()) << "coordinates matched: nothing to re-check";
  EXPECT_THAT(g.Find("parent")->DependentUids(), ElementsAre("child"));
}

// Dependents with equal references share one list (a ReplicaSet's pods); a dependent whose
// references change gets its own and leaves the owner it no longer names. Queued dependents come
// out ordered by uid whatever order they were added in.
TEST(OwnerGraphTest, EqualReferencesShareOneListAndDependentsComeOutInUidOrder) {
  OwnerGraph g;
  (void)g.Process(Add({.name = "rs"}));
  for (const char* pod : {"p3", "p1", "p2"}) {
    (void)g.Process(Add({.name = pod, .refs = {RefTo("rs", /*block=*/true)}}));
  }
  (void)g.Process(Add({.name = "other", .refs = {RefTo("rs")}}));
  EXPECT_EQ(g.Find("p1")->owners.get(), g.Find("p2")->owners.get());
  EXPECT_EQ(g.Find("p1")->owners.get(), g.Find("p3")->owners.get());
  EXPECT_NE(g.Find("p1")->owners.get(), g.Find("other")->owners.get())
      << "blockOwnerDeletion differs: not the same references";
  EXPECT_EQ(g.Find("rs")->owners->size(), 0u);

  const Obj p2{.name = "p2", .refs = {RefTo("rs", true)}};
  (void)g.Process(Update(p2, {.name = "p2", .refs = {RefTo("rs2")}}));
  EXPECT_NE(g.Find("p2")->owners.get(), g.Find("p1")->owners.get());
  EXPECT_THAT(g.Find("rs")->DependentUids(), ElementsAre("other", "p1", "p3"));
  EXPECT_THAT(g.Find("rs2")->DependentUids(), ElementsAre("p2"));

  GraphActions a = g.Process(Update(
      {.name = "rs"}, {.name = "rs", .finalizers = {"foregroundDeletion"}, .deleting = true}));
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("other", "p1", "p3", "rs"));

  // Dependents leave before their owner and after it, in any order, and the owner's set stays
  // exact (ASan would catch a set that kept a node the graph had let go).
  (void)g.Process(Delete({.name = "p1", .refs = {RefTo("rs", true)}}));
  EXPECT_THAT(g.Find("rs")->DependentUids(), ElementsAre("other", "p3"));
  a = g.Process(Delete({.name = "rs"}));
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("other", "p3"));
  (void)g.Process(Delete({.name = "p3", .refs = {RefTo("rs", true)}}));
  (void)g.Process(Add({.name = "rs"}));
  EXPECT_THAT(g.Find("rs")->DependentUids(), IsEmpty());
}

TEST(OwnerGraphTest, OwnerDeletionQueuesDependentsAndRecordsAbsence) {
  OwnerGraph g;
  (void)g.Process(Add({.name = "parent"}));
  (void)g.Process(Add({.name = "a", .refs = {RefTo("parent")}}));
  (void)g.Process(Add({.name = "b", .refs = {RefTo("parent")}}));
  GraphActions a = g.Process(Delete({.name = "parent"}));
  EXPECT_THAT(a.attempt_to_delete, UnorderedElementsAre("a", "b"));
  ASSERT_EQ(a.absent.size(), 1u);
  EXPECT_EQ(a.absent[0].uid, "parent");
  EXPECT_EQ(g.Find("parent"), nullptr);
  EXPECT_NE(g.Find("a"), nullptr);
}

TEST(OwnerGraphTest, DeletingADependentWakesAnOwnerDeletingDependents) {
  OwnerGraph g;
  Obj owner{.name = "owner"};
  (void)g.Process(Add(owner));
  Obj child{.name = "child", .refs = {RefTo("owner", true)}};
  (void)g.Process(Add(child));
  Obj deleting = owner;
  deleting.deleting = true;
  deleting.finalizers = {"foregroundDeletion"};
  GraphActions a = g.Process(Update(owner, deleting));
  EXPECT_TRUE(g.Find("owner")->deleting_dependents);
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("child", "owner"));
  a = g.Process(Delete(child));
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("owner"));
  EXPECT_THAT(g.Find("owner")->DependentUids(), IsEmpty());
}

TEST(OwnerGraphTest, TransitionsFireOnceNotOnResync) {
  OwnerGraph g;
  Obj o{.name = "o", .finalizers = {"orphan"}, .deleting = true};
  GraphActions a = g.Process(Add(o));  // e.g. the initial list after a restart
  EXPECT_THAT(a.attempt_to_orphan, ElementsAre("o"));
  a = g.Process(Update(o, o));  // a resync: no transition
  EXPECT_THAT(a.attempt_to_orphan, IsEmpty());

  Obj f{.name = "f", .finalizers = {"foregroundDeletion"}, .deleting = true};
  a = g.Process(Add(f));
  EXPECT_TRUE(g.Find("f")->deleting_dependents);
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("f"));
  a = g.Process(Update(f, f));
  EXPECT_THAT(a.attempt_to_delete, IsEmpty());
}

TEST(OwnerGraphTest, DroppingABlockingReferenceUnblocksAWaitingOwner) {
  OwnerGraph g;
  Obj owner{.name = "owner", .finalizers = {"foregroundDeletion"}, .deleting = true};
  (void)g.Process(Add(owner));
  Obj child{.name = "child", .refs = {RefTo("owner", true)}};
  (void)g.Process(Add(child));
  Obj unblocked = child;
  unblocked.refs = {RefTo("owner", false)};
  GraphActions a = g.Process(Update(child, unblocked));
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("owner")) << "block turned off";
  Obj dropped = child;
  dropped.refs = {};
  (void)g.Process(Update(unblocked, child));
  a = g.Process(Update(child, dropped));
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("owner")) << "blocking reference removed";
  EXPECT_THAT(g.Find("owner")->DependentUids(), IsEmpty());
}

TEST(OwnerGraphTest, ReferencesMoveBetweenOwners) {
  OwnerGraph g;
  (void)g.Process(Add({.name = "a"}));
  (void)g.Process(Add({.name = "b"}));
  Obj c{.name = "c", .refs = {RefTo("a")}};
  (void)g.Process(Add(c));
  Obj moved = c;
  moved.refs = {RefTo("b")};
  GraphActions a = g.Process(Update(c, moved));
  EXPECT_THAT(a.attempt_to_delete, IsEmpty());
  EXPECT_THAT(g.Find("a")->DependentUids(), IsEmpty());
  EXPECT_THAT(g.Find("b")->DependentUids(), ElementsAre("c"));
}

TEST(OwnerGraphTest, ObservedOwnerInAnotherNamespaceIsReported) {
  OwnerGraph g;
  (void)g.Process(Add({.kind = "ReplicaSet", .api_version = "apps/v1", .name = "rs", .ns = "a"}));
  GraphActions a = g.Process(
      Add({.name = "cm", .ns = "b", .refs = {RefTo("rs", false, "ReplicaSet", "apps/v1")}}));
  ASSERT_EQ(a.invalid_namespace.size(), 1u);
  EXPECT_EQ(a.invalid_namespace[0].dependent.name, "cm");
  EXPECT_EQ(a.invalid_namespace[0].owner.uid, "rs");
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("cm")) << "verify the reference";
}

TEST(OwnerGraphTest, ClusterScopedOwnersOwnAcrossNamespaces) {
  OwnerGraph g;
  (void)g.Process(Add({.kind = "ClusterRole",
                       .api_version = "rbac.authorization.k8s.io/v1",
                       .name = "role",
                       .ns = ""}));
  GraphActions a = g.Process(
      Add({.name = "cm",
           .ns = "b",
           .refs = {RefTo("role", false, "ClusterRole", "rbac.authorization.k8s.io/v1")}}));
  EXPECT_THAT(a.invalid_namespace, IsEmpty());
  EXPECT_THAT(a.attempt_to_delete, IsEmpty());
}

TEST(OwnerGraphTest, MismatchedCoordinatesAreReverifiedWhenTheOwnerIsObserved) {
  OwnerGraph g;
  // The child names uid "parent" as a Secret; the object with that uid is a ConfigMap.
  (void)g.Process(Add({.name = "child", .refs = {RefTo("parent", false, "Secret")}}));
  GraphActions a = g.Process(Add({.name = "parent"}));
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("child"));
  EXPECT_EQ(g.Find("parent")->identity.kind, "ConfigMap");
}

TEST(OwnerGraphTest, VirtualDeleteRemovesAVirtualOwnerAndQueuesItsDependents) {
  OwnerGraph g;
  (void)g.Process(Add({.name = "child", .refs = {RefTo("ghost")}}));
  ObjectIdentity ghost{"v1", "ConfigMap", "ghost", "ghost", "ns"};
  GraphActions a = g.Process(VirtualDelete(ghost));
  EXPECT_EQ(g.Find("ghost"), nullptr);
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("child"));
  ASSERT_EQ(a.absent.size(), 1u);
  EXPECT_EQ(a.absent[0], ghost);
}

TEST(OwnerGraphTest, VirtualDeleteKeepsAVirtualOwnerOthersNameDifferently) {
  OwnerGraph g;
  (void)g.Process(Add({.name = "c1", .refs = {RefTo("ghost")}}));
  (void)g.Process(Add({.name = "c2", .refs = {RefTo("ghost", false, "Secret")}}));
  ObjectIdentity as_cm{"v1", "ConfigMap", "ghost", "ghost", "ns"};
  GraphActions a = g.Process(VirtualDelete(as_cm));
  const Node* n = g.Find("ghost");
  ASSERT_NE(n, nullptr) << "c2 still names the uid as a Secret";
  EXPECT_EQ(n->identity.kind, "Secret");
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("c1"));
  EXPECT_THAT(a.attempt_to_delete_rate_limited, ElementsAre("ghost"));
  // The worker deletes c1 (its owner is known absent as a ConfigMap); then the uid is verified
  // absent as a Secret too, and the node goes.
  ObjectIdentity as_secret = n->identity;
  (void)g.Process(Delete({.name = "c1", .refs = {RefTo("ghost")}}));
  a = g.Process(VirtualDelete(as_secret));
  EXPECT_EQ(g.Find("ghost"), nullptr);
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("c2"));
}

TEST(OwnerGraphTest, VirtualDeleteOfOtherCoordinatesSparesAnObservedNode) {
  OwnerGraph g;
  (void)g.Process(Add({.name = "parent"}));
  (void)g.Process(Add({.name = "good", .refs = {RefTo("parent")}}));
  (void)g.Process(Add({.name = "bad", .refs = {RefTo("parent", false, "Secret")}}));
  GraphActions a = g.Process(VirtualDelete({"v1", "Secret", "parent", "parent", "ns"}));
  EXPECT_NE(g.Find("parent"), nullptr);
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("bad"));
}

TEST(OwnerGraphTest, CycleIsRepresentedWithoutRecursion) {
  OwnerGraph g;
  (void)g.Process(Add({.name = "p1", .refs = {RefTo("p3", true)}}));
  (void)g.Process(Add({.name = "p2", .refs = {RefTo("p1", true)}}));
  (void)g.Process(Add({.name = "p3", .refs = {RefTo("p2", true)}}));
  EXPECT_THAT(g.Find("p1")->DependentUids(), ElementsAre("p2"));
  EXPECT_THAT(g.Find("p2")->DependentUids(), ElementsAre("p3"));
  EXPECT_THAT(g.Find("p3")->DependentUids(), ElementsAre("p1"));
  EXPECT_TRUE(g.Find("p3")->observed);
  GraphActions a = g.Process(Delete({.name = "p2", .refs = {RefTo("p1", true)}}));
  EXPECT_THAT(a.attempt_to_delete, ElementsAre("p3"));
  EXPECT_THAT(g.Find("p1")->DependentUids(), IsEmpty());
  EXPECT_EQ(g.size(), 2u);
}

}  // namespace
}  // namespace converge::controllers::garbagecollector
