#include "controllers/garbagecollector/decide.h"

#include <gtest/gtest.h>

#include <map>

namespace converge::controllers::garbagecollector {
namespace {

namespace json = boost::json;

OwnerReference Ref(std::string uid, bool block = false) {
  return {"apps/v1", "ReplicaSet", "rs-" + uid, uid, true, block};
}

api::Object Item(std::vector<std::string> finalizers = {}) {
  api::Object o;
  o.SetGvk({"", "v1", "Pod"});
  o.set_name("p");
  o.set_namespace("ns");
  o.set_uid("p-uid");
  o.set_resource_version("7");
  for (const auto& f : finalizers) o.AddFinalizer(f);
  return o;
}

ItemView View(std::vector<DependentView> deps = {}) {
  ItemView v;
  v.identity = {"v1", "Pod", "p", "p-uid", "ns"};
  v.observed = true;
  v.dependents = std::move(deps);
  return v;
}

struct ItemCase {
  std::string name;
  std::vector<OwnerState> owners;  // one reference per entry, uids "o0", "o1", ...
  std::vector<DependentView> dependents;
  std::vector<std::string> item_finalizers;
  ItemDecision want;
};

class DecideItemTest : public ::testing::TestWithParam<ItemCase> {};

TEST_P(DecideItemTest, Decides) {
  const ItemCase& c = GetParam();
  std::vector<ClassifiedOwner> owners;
  for (size_t i = 0; i < c.owners.size(); ++i) {
    owners.push_back({Ref("o" + std::to_string(i)), c.owners[i]});
  }
  ItemDecision got = DecideItem(View(c.dependents), Item(c.item_finalizers), owners);
  EXPECT_EQ(static_cast<int>(got.action), static_cast<int>(c.want.action));
  EXPECT_EQ(got.remove_owner_uids, c.want.remove_owner_uids);
  EXPECT_EQ(got.unblock_owner_references, c.want.unblock_owner_references);
  EXPECT_EQ(got.propagation_policy, c.want.propagation_policy);
}

using A = ItemDecision::Action;
using S = OwnerState;

INSTANTIATE_TEST_SUITE_P(
    Table, DecideItemTest,
    ::testing::Values(ItemCase{"NoOwnersIsNotOurs", {}, {}, {}, {}},
                      ItemCase{"SolidOwnerKeeps", {S::kSolid}, {}, {}, {}},
                      ItemCase{"SolidAndDanglingDropsTheDangling",
                               {S::kDangling, S::kSolid},
                               {},
                               {},
                               {A::kRemoveOwnerReferences, {"o0"}, false, ""}},
                      ItemCase{"SolidAndWaitingDropsTheWaiting",
                               {S::kSolid, S::kWaitingForDependentsDeletion, S::kDangling},
                               {},
                               {},
                               {A::kRemoveOwnerReferences, {"o2", "o1"}, false, ""}},
                      ItemCase{"AllDanglingDeletesInTheBackground",
                               {S::kDangling, S::kDangling},
                               {},
                               {},
                               {A::kDelete, {}, false, "Background"}},
                      ItemCase{"DanglingHonoursAnOrphanFinalizer",
                               {S::kDangling},
                               {},
                               {"orphan"},
                               {A::kDelete, {}, false, "Orphan"}},
                      ItemCase{"DanglingHonoursAForegroundFinalizer",
                               {S::kDangling},
                               {},
                               {"foregroundDeletion"},
                               {A::kDelete, {}, false, "Foreground"}},
                      ItemCase{"WaitingOwnerWithoutDependentsDeletesInTheBackground",
                               {S::kWaitingForDependentsDeletion},
                               {},
                               {},
                               {A::kDelete, {}, false, "Background"}},
                      ItemCase{"WaitingOwnerWithDependentsDeletesInTheForeground",
                               {S::kWaitingForDependentsDeletion},
                               {{"d1", false, true}},
                               {},
                               {A::kDelete, {}, false, "Foreground"}},
                      ItemCase{"CycleUnblocksBeforeForeground",
                               {S::kWaitingForDependentsDeletion, S::kDangling},
                               {{"d1", false, true}, {"d2", true, true}},
                               {},
                               {A::kDelete, {}, true, "Foreground"}}),
    [](const auto& info) { return info.param.name; });

TEST(DecideDeletingDependentsTest, Table) {
  struct Case {
    std::string name;
    std::vector<DependentView> deps;
    bool remove;
    std::vector<std::string> enqueue;
  };
  std::vector<Case> cases = {
      {"NoDependents", {}, true, {}},
      {"OnlyNonBlockingDependents", {{"a", false, false}, {"b", true, false}}, true, {}},
      {"BlockingDependentIsQueued", {{"a", false, true}, {"b", false, false}}, false, {"a"}},
      // A blocking dependent already deleting its own dependents still blocks, but queueing it
      // again would only spin.
      {"BlockingDependentDeletingDependents", {{"a", true, true}}, false, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ItemView v = View(c.deps);
    v.being_deleted = v.deleting_dependents = true;
    DeletingDependentsDecision d = DecideDeletingDependents(v);
    EXPECT_EQ(d.remove_finalizer, c.remove);
    EXPECT_EQ(d.enqueue, c.enqueue);
  }
}

TEST(ClassifyOwnerTest, Table) {
  OwnerReference ref = Ref("u1");
  EXPECT_EQ(ClassifyOwner(ref, OwnerLookup::Absent()), OwnerState::kDangling);
  OwnerLookup other{true, "u2", false, false};
  EXPECT_EQ(ClassifyOwner(ref, other), OwnerState::kDangling) << "a namesake is not the owner";
  EXPECT_EQ(ClassifyOwner(ref, {true, "u1", false, false}), OwnerState::kSolid);
  EXPECT_EQ(ClassifyOwner(ref, {true, "u1", true, false}), OwnerState::kSolid)
      << "being deleted in the background: still an owner";
  EXPECT_EQ(ClassifyOwner(ref, {true, "u1", true, true}),
            OwnerState::kWaitingForDependentsDeletion);
  EXPECT_EQ(ClassifyOwner(ref, {true, "u1", false, true}), OwnerState::kSolid)
      << "the finalizer alone does not mean waiting";
}

TEST(ViewOfTest, MarksBlockingDependents) {
  OwnerGraph g;
  auto obj = [](std::string name, json::array refs) {
    api::Object o;
    o.SetGvk({"", "v1", "ConfigMap"});
    o.set_name(name);
    o.set_namespace("ns");
    o.set_uid(name);
    if (!refs.empty()) o.mutable_metadata()["ownerReferences"] = std::move(refs);
    return std::make_shared<const api::Object>(std::move(o));
  };
  json::object block{{"apiVersion", "v1"},
                     {"kind", "ConfigMap"},
                     {"name", "owner"},
                     {"uid", "owner"},
                     {"blockOwnerDeletion", true}};
  json::object plain{
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"name", "owner"}, {"uid", "owner"}};
  (void)g.Process({.type = GraphEventType::kAdd, .object = obj("owner", {})});
  (void)g.Process({.type = GraphEventType::kAdd, .object = obj("b", {block})});
  (void)g.Process({.type = GraphEventType::kAdd, .object = obj("a", {plain})});
  std::optional<ItemView> v = ViewOf(g, "owner");
  ASSERT_TRUE(v);
  ASSERT_EQ(v->dependents.size(), 2u);
  // In no particular order (upstream's dependents are a map too).
  std::map<std::string, bool> blocks;
  for (const DependentView& d : v->dependents) blocks[d.uid] = d.blocks_owner;
  EXPECT_EQ(blocks, (std::map<std::string, bool>{{"a", false}, {"b", true}}));
  EXPECT_FALSE(ViewOf(g, "missing"));
}

api::Object WithRefs() {
  api::Object o = Item();
  json::array refs;
  refs.push_back(json::object{{"apiVersion", "v1"},
                              {"kind", "Pod"},
                              {"name", "a"},
                              {"uid", "ua"},
                              {"blockOwnerDeletion", true}});
  refs.push_back(json::object{
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "b"}, {"uid", "ub"}, {"controller", true}});
  o.mutable_metadata()["ownerReferences"] = std::move(refs);
  return o;
}

TEST(PatchTest, RemoveOwnerReferencesKeepsTheOthersVerbatimAndPinsTheVersion) {
  std::optional<std::string> p = RemoveOwnerReferencesPatch(WithRefs(), {"ua"});
  ASSERT_TRUE(p);
  EXPECT_EQ(json::parse(*p), json::parse(R"({"metadata":{"resourceVersion":"7",
      "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"b","uid":"ub",
      "controller":true}]}})"));
  std::optional<std::string> all = RemoveOwnerReferencesPatch(WithRefs(), {"ua", "ub"});
  ASSERT_TRUE(all);
  EXPECT_EQ(json::parse(*all),
            json::parse(R"({"metadata":{"resourceVersion":"7","ownerReferences":null}})"));
  EXPECT_FALSE(RemoveOwnerReferencesPatch(WithRefs(), {"other"})) << "nothing to remove";
  EXPECT_FALSE(RemoveOwnerReferencesPatch(Item(), {"ua"}));
}

TEST(PatchTest, UnblockOwnerReferences) {
  std::optional<std::string> p = UnblockOwnerReferencesPatch(WithRefs());
  ASSERT_TRUE(p);
  EXPECT_EQ(json::parse(*p), json::parse(R"({"metadata":{"resourceVersion":"7",
      "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"a","uid":"ua",
      "blockOwnerDeletion":false},{"apiVersion":"v1","kind":"Pod","name":"b","uid":"ub",
      "controller":true}]}})"));
  EXPECT_FALSE(UnblockOwnerReferencesPatch(Item())) << "no references";
}

TEST(PatchTest, RemoveFinalizer) {
  api::Object o = Item({"a", "foregroundDeletion"});
  std::optional<std::string> p = RemoveFinalizerPatch(o, "foregroundDeletion");
  ASSERT_TRUE(p);
  EXPECT_EQ(json::parse(*p),
            json::parse(R"({"metadata":{"resourceVersion":"7","finalizers":["a"]}})"));
  std::optional<std::string> last = RemoveFinalizerPatch(Item({"orphan"}), "orphan");
  ASSERT_TRUE(last);
  EXPECT_EQ(json::parse(*last),
            json::parse(R"({"metadata":{"resourceVersion":"7","finalizers":null}})"));
  EXPECT_FALSE(RemoveFinalizerPatch(o, "orphan"));
}

}  // namespace
}  // namespace converge::controllers::garbagecollector
