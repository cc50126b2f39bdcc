#include "client/indexer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "client/lister.h"

namespace converge::client {
namespace {

api::ObjectPtr PodOn(const std::string& ns, const std::string& name, const std::string& node,
                     std::map<std::string, std::string> labels = {},
                     std::vector<std::pair<std::string, bool>> owners = {}) {
  api::Object o;
  o.SetGvk({"", "v1", "Pod"});
  o.set_namespace(ns);
  o.set_name(name);
  for (const auto& [k, v] : labels) o.SetLabel(k, v);
  if (!node.empty()) api::EnsureObject(o.mutable_doc(), "spec")["nodeName"] = node;
  if (!owners.empty()) {
    boost::json::array refs;
    for (const auto& [uid, controller] : owners) {
      refs.push_back(boost::json::object{{"uid", uid}, {"controller", controller}});
    }
    o.mutable_metadata()["ownerReferences"] = std::move(refs);
  }
  return std::make_shared<const api::Object>(std::move(o));
}

std::vector<std::string> Names(std::vector<api::ObjectPtr> objs) {
  std::vector<std::string> out;
  for (const auto& o : objs) out.push_back(o->key().ToString());
  std::sort(out.begin(), out.end());
  return out;
}

Indexer AllIndexes() {
  return Indexer({{std::string(kNamespaceIndex), NamespaceIndexFunc},
                  {std::string(kOwnerUidIndex), OwnerUidIndexFunc},
                  {std::string(kControllerUidIndex), ControllerUidIndexFunc},
                  {std::string(kLabelsIndex), LabelsIndexFunc},
                  {std::string(kNodeNameIndex), FieldIndexFunc("spec.nodeName")},
                  {"label:app", LabelIndexFunc("app")}});
}

TEST(IndexerTest, QueriesEveryBuiltInIndex) {
  Indexer idx = AllIndexes();
  idx.Upsert(PodOn("a", "p1", "n1", {{"app", "web"}}, {{"rs-1", true}}));
  idx.Upsert(PodOn("a", "p2", "n2", {{"app", "web"}}, {{"rs-1", true}, {"other", false}}));
  idx.Upsert(PodOn("b", "p3", "n1", {{"app", "db"}}, {{"other", false}}));
  idx.Upsert(PodOn("b", "p4", ""));

  EXPECT_EQ(Names(*idx.ByIndex(kNamespaceIndex, "a")), (std::vector<std::string>{"a/p1", "a/p2"}));
  EXPECT_EQ(Names(*idx.ByIndex(kOwnerUidIndex, "other")),
            (std::vector<std::string>{"a/p2", "b/p3"}));
  EXPECT_EQ(Names(*idx.ByIndex(kControllerUidIndex, "rs-1")),
            (std::vector<std::string>{"a/p1", "a/p2"}));
  EXPECT_TRUE(idx.ByIndex(kControllerUidIndex, "other")->empty());
  EXPECT_EQ(Names(*idx.ByIndex(kLabelsIndex, "app=web")),
            (std::vector<std::string>{"a/p1", "a/p2"}));
  EXPECT_EQ(Names(*idx.ByIndex(kNodeNameIndex, "n1")), (std::vector<std::string>{"a/p1", "b/p3"}));
  EXPECT_EQ(Names(*idx.ByIndex("label:app", "db")), (std::vector<std::string>{"b/p3"}));
  EXPECT_EQ(*idx.ListIndexFuncValues(kNodeNameIndex), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(Names(*idx.Index(kNodeNameIndex, *PodOn("x", "probe", "n2"))),
            (std::vector<std::string>{"a/p2"}));
  EXPECT_EQ(idx.ByIndex("nope", "x").status().code(), util::Code::kNotFound);
}

TEST(IndexerTest, UpdatesMoveObjectsBetweenIndexValues) {
  Indexer idx = AllIndexes();
  idx.Upsert(PodOn("a", "p1", "n1", {{"app", "web"}}));
  api::ObjectPtr old = idx.Upsert(PodOn("a", "p1", "n2", {{"app", "api"}}));
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(api::FieldValue(old->doc(), "spec.nodeName"), "n1");
  EXPECT_TRUE(idx.ByIndex(kNodeNameIndex, "n1")->empty());
  EXPECT_EQ(Names(*idx.ByIndex(kNodeNameIndex, "n2")), (std::vector<std::string>{"a/p1"}));
  EXPECT_TRUE(idx.ByIndex(kLabelsIndex, "app=web")->empty());
  // Emptied values disappear instead of accumulating.
  EXPECT_EQ(*idx.ListIndexFuncValues(kNodeNameIndex), (std::vector<std::string>{"n2"}));
  ASSERT_NE(idx.Delete({"a", "p1"}), nullptr);
  EXPECT_EQ(idx.Delete({"a", "p1"}), nullptr);
  EXPECT_TRUE(idx.ListIndexFuncValues(kNodeNameIndex)->empty());
  EXPECT_EQ(idx.size(), 0u);
}

TEST(IndexerTest, ReplaceAndLateIndexersRebuild) {
  Indexer idx;  // namespace index only
  idx.Upsert(PodOn("a", "old", "n1"));
  idx.Replace({PodOn("a", "p1", "n1"), PodOn("b", "p2", "n2")});
  EXPECT_EQ(idx.Get({"a", "old"}), nullptr);
  EXPECT_EQ(Names(*idx.ByIndex(kNamespaceIndex, "b")), (std::vector<std::string>{"b/p2"}));
  ASSERT_TRUE(
      idx.AddIndexers({{std::string(kNodeNameIndex), FieldIndexFunc("spec.nodeName")}}).ok());
  EXPECT_EQ(Names(*idx.ByIndex(kNodeNameIndex, "n1")), (std::vector<std::string>{"a/p1"}));
  EXPECT_EQ(idx.AddIndexers({{std::string(kNamespaceIndex), NamespaceIndexFunc}}).code(),
            util::Code::kInvalidArgument);
}

TEST(IndexerTest, CachedObjectsCannotBeModifiedThroughTheCache) {
  Indexer idx;
  idx.Upsert(PodOn("a", "p1", "n1"));
  api::ObjectPtr p = idx.Get({"a", "p1"});
  static_assert(std::is_const_v<std::remove_reference_t<decltype(*p)>>);
  api::Object copy = *p;  // the way to change one: copy it
  copy.SetLabel("x", "y");
  EXPECT_FALSE(idx.Get({"a", "p1"})->label("x").has_value());
}

// Seeded random operations checked against a simple reference model: for every index value, the
// keys the indexer returns equal those found by scanning the model.
TEST(IndexerTest, EntriesAreKeyedByTheirObjectsNamespaceAndName) {
  // The same name namespaced twice and cluster-scoped once: three entries, each found by its key.
  Indexer idx = AllIndexes();
  api::ObjectPtr a = PodOn("a", "same", "n1");
  api::ObjectPtr b = PodOn("b", "same", "n1");
  api::ObjectPtr cluster = PodOn("", "same", "");
  for (const api::ObjectPtr& o : {a, b, cluster}) EXPECT_EQ(idx.Upsert(o), nullptr);
  EXPECT_EQ(idx.size(), 3u);
  EXPECT_EQ(idx.Get({"a", "same"}), a);
  EXPECT_EQ(idx.Get({"", "same"}), cluster);
  EXPECT_EQ(idx.Get({"same", ""}), nullptr);
  std::vector<api::ObjectKey> keys = idx.ListKeys();
  EXPECT_EQ(std::set<api::ObjectKey>(keys.begin(), keys.end()),
            (std::set<api::ObjectKey>{{"a", "same"}, {"b", "same"}, {"", "same"}}));

  api::ObjectPtr a2 = PodOn("a", "same", "n2");
  EXPECT_EQ(idx.Upsert(a2), a) << "the previous version comes back";
  EXPECT_EQ(idx.Get({"a", "same"}), a2);
  EXPECT_EQ(Names(*idx.ByIndex(kNodeNameIndex, "n2")), std::vector<std::string>{"a/same"});
  EXPECT_EQ(idx.Delete({"b", "same"}), b);
  EXPECT_EQ(idx.Delete({"b", "same"}), nullptr);
  EXPECT_EQ(idx.size(), 2u);

  // Replace with a key given twice keeps the last one.
  api::ObjectPtr first = PodOn("a", "x", "n1");
  api::ObjectPtr last = PodOn("a", "x", "n3");
  idx.Replace({first, last});
  EXPECT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx.Get({"a", "x"}), last);
  EXPECT_EQ(idx.ByIndex(kNodeNameIndex, "n1")->size(), 0u);
}

TEST(IndexerTest, MatchesAReferenceModelUnderRandomOperations) {
  std::mt19937 rng(20240611);
  Indexer idx = AllIndexes();
  std::map<api::ObjectKey, api::ObjectPtr> model;
  const std::vector<std::string> nodes = {"", "n1", "n2", "n3"};
  const std::vector<std::string> apps = {"web", "db", "cache"};
  const Indexers fns = {{std::string(kNamespaceIndex), NamespaceIndexFunc},
                        {std::string(kNodeNameIndex), FieldIndexFunc("spec.nodeName")},
                        {std::string(kLabelsIndex), LabelsIndexFunc},
                        {std::string(kOwnerUidIndex), OwnerUidIndexFunc},
                        {std::string(kControllerUidIndex), ControllerUidIndexFunc}};
  // Every index query answers with exactly the model's objects: the current version of each
  // (the same pointer), not an earlier one at the same key.
  auto check = [&](int step) {
    ASSERT_EQ(idx.size(), model.size()) << "step " << step;
    for (const auto& [index, fn] : fns) {
      std::map<std::string, std::set<const api::Object*>> objects;
      std::map<std::string, std::set<api::ObjectKey>> keys;
      for (const auto& [key, obj] : model) {
        for (const std::string& v : fn(*obj)) {
          objects[v].insert(obj.get());
          keys[v].insert(key);
        }
      }
      EXPECT_EQ(idx.ListIndexFuncValues(index)->size(), objects.size()) << index;
      for (const auto& [v, want] : objects) {
        auto listed = idx.ByIndex(index, v);
        ASSERT_TRUE(listed.ok());
        std::set<const api::Object*> got;
        for (const api::ObjectPtr& o : *listed) got.insert(o.get());
        EXPECT_EQ(got, want) << index << "=" << v << " at step " << step;
        std::vector<api::ObjectKey> got_keys = *idx.IndexKeys(index, v);
        EXPECT_EQ(std::set<api::ObjectKey>(got_keys.begin(), got_keys.end()), keys[v])
            << index << "=" << v << " at step " << step;
      }
    }
  };
  for (int step = 0; step < 3000; ++step) {
    std::string ns = "ns" + std::to_string(rng() % 3);
    std::string name = "p" + std::to_string(rng() % 20);
    int op = static_cast<int>(rng() % 10);
    if (op < 6) {
      api::ObjectPtr p =
          PodOn(ns, name, nodes[rng() % nodes.size()], {{"app", apps[rng() % apps.size()]}},
                {{"uid" + std::to_string(rng() % 4), rng() % 2 == 0}});
      idx.Upsert(p);
      model[p->key()] = p;
    } else if (op < 9) {
      idx.Delete({ns, name});
      model.erase({ns, name});
    } else {
      std::vector<api::ObjectPtr> objs;
      for (int i = 0; i < 5; ++i) {
        objs.push_back(PodOn("ns0", "r" + std::to_string(i), nodes[rng() % nodes.size()]));
      }
      idx.Replace(objs);
      model.clear();
      for (const auto& o : objs) model[o->key()] = o;
    }
    if (step % 50 == 49) check(step);
  }
  check(3000);
}

TEST(ListerTest, ListsByNamespaceAndSelector) {
  Indexer idx;
  idx.Upsert(PodOn("a", "p1", "", {{"app", "web"}}));
  idx.Upsert(PodOn("a", "p2", "", {{"app", "db"}}));
  idx.Upsert(PodOn("b", "p3", "", {{"app", "web"}}));
  Lister lister(&idx);
  api::LabelSelector web = *api::LabelSelector::Parse("app=web");
  EXPECT_EQ(Names(lister.List(web)), (std::vector<std::string>{"a/p1", "b/p3"}));
  EXPECT_EQ(Names(lister.List("a")), (std::vector<std::string>{"a/p1", "a/p2"}));
  EXPECT_EQ(Names(lister.List("a", web)), (std::vector<std::string>{"a/p1"}));
  EXPECT_NE(lister.Get({"b", "p3"}), nullptr);
  EXPECT_EQ(lister.Get({"b", "p1"}), nullptr);
}

}  // namespace
}  // namespace converge::client
