#include "api/json_view.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "api/object.h"

namespace converge::api {
namespace {

// A Running pod as the API server serves it (without managedFields), with one of every kind of
// value the encoding stores differently: large and negative integers, uint64, doubles, empty
// strings/objects/arrays, nulls, a key too long to intern and an object big enough to be indexed.
constexpr const char* kPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web-7d4b9c8f6d-x2k9p", "namespace": "default",
               "uid": "0f8e6c1a-3b2d-4e5f-8a9b-1c2d3e4f5a6b", "resourceVersion": "123456",
               "generation": 3, "finalizers": ["example.com/keep"],
               "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d"},
               "annotations": {"a-very-long-annotation-key.example.com/that-is-longer-than-sixty-four-bytes": "v",
                               "note": ""},
               "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                    "name": "web-7d4b9c8f6d", "controller": true,
                                    "blockOwnerDeletion": true, "uid": "5e6f7a8b"}]},
  "spec": {"containers": [{"name": "app", "image": "registry.example/app:1.2.3",
                           "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                           "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
           "nodeName": "node-00042", "terminationGracePeriodSeconds": 30,
           "priority": -2000000000, "limit": 268435455, "below": -268435456,
           "above": 268435456, "enableServiceLinks": true, "hostNetwork": false,
           "overhead": null, "weight": 0.5, "big": 18446744073709551615,
           "securityContext": {}, "volumes": [], "hostname": "",
           "nodeSelector": {"k01": "a", "k02": "b", "k03": "c", "k04": "d", "k05": "e",
                            "k06": "f", "k07": "g", "k08": "h", "k09": "i", "k10": "j",
                            "k11": "k", "k12": "l", "k13": "m", "k14": "n", "k15": "o",
                            "k16": "p", "k17": "q", "k00": "z"}},
  "status": {"phase": "Running",
             "conditions": [{"type": "Ready", "status": "True",
                             "lastTransitionTime": "2026-12-06T18:00:00Z"},
                            {"type": "PodScheduled", "status": "True",
                             "lastTransitionTime": "2026-12-06T18:00:00Z"}],
             "message": "ünïcödé \"quoted\" \\ text"}
})";

json::object ParsePod() {
  return json::parse(kPod).as_object();
}

// Walks both views of the same document and checks they read the same everywhere.
void ExpectSameReads(View a, const json::value& want, const std::string& at) {
  SCOPED_TRACE(at);
  ASSERT_TRUE(static_cast<bool>(a));
  ASSERT_EQ(a.kind(), want.kind());
  switch (want.kind()) {
    case json::kind::null: EXPECT_TRUE(a.is_null()); break;
    case json::kind::bool_: EXPECT_EQ(a.if_bool(), want.get_bool()); break;
    case json::kind::int64:
      EXPECT_EQ(a.if_int64(), want.get_int64());
      EXPECT_EQ(a.to_int64(), want.get_int64());
      break;
    case json::kind::uint64:
      EXPECT_FALSE(a.if_int64().has_value());
      EXPECT_EQ(a.if_uint64(), want.get_uint64());
      EXPECT_EQ(a.to_double(), static_cast<double>(want.get_uint64()));
      break;
    case json::kind::double_: EXPECT_EQ(a.to_double(), want.get_double()); break;
    case json::kind::string:
      EXPECT_EQ(a.if_string(), std::string_view(want.get_string()));
      EXPECT_FALSE(a.if_object());
      break;
    case json::kind::array: {
      ArrayView arr = a.if_array();
      ASSERT_TRUE(static_cast<bool>(arr));
      ASSERT_EQ(arr.size(), want.get_array().size());
      size_t i = 0;
      for (View v : arr) {
        ExpectSameReads(v, want.get_array()[i], at + "[" + std::to_string(i) + "]");
        ++i;
      }
      EXPECT_FALSE(arr.at(i));
      break;
    }
    case json::kind::object: {
      ObjectView obj = a.if_object();
      ASSERT_TRUE(static_cast<bool>(obj));
      ASSERT_EQ(obj.size(), want.get_object().size());
      auto it = want.get_object().begin();
      for (Member m : obj) {  // document order
        EXPECT_EQ(m.key(), std::string_view(it->key()));
        ExpectSameReads(m.value(), it->value(), at + "." + std::string(m.key()));
        ExpectSameReads(obj.if_contains(it->key()), it->value(), at + "/" + std::string(m.key()));
        EXPECT_EQ(obj.find(it->key())->key(), std::string_view(it->key()));
        ++it;
      }
      EXPECT_FALSE(obj.contains("no-such-key"));
      EXPECT_TRUE(obj.find("no-such-key") == obj.end());
      break;
    }
  }
}

TEST(CompactTreeTest, ReadsAsTheTreeItWasBuiltFromAndCopiesBackToIt) {
  const json::object doc = ParsePod();
  CompactTree tree = CompactTree::Build(doc);
  ASSERT_TRUE(static_cast<bool>(tree));
  // The compact root is an object view; walk it as a value of kind object.
  ObjectView root = tree.root();
  ASSERT_EQ(root.size(), doc.size());
  for (const json::key_value_pair& kv : doc) {
    ExpectSameReads(root.if_contains(kv.key()), kv.value(), std::string(kv.key()));
  }
  EXPECT_EQ(ToJson(root), doc);
  EXPECT_EQ(Serialize(root), json::serialize(doc));  // member order kept
  // And the Boost.JSON form of the views reads the same.
  for (const json::key_value_pair& kv : doc) {
    ExpectSameReads(ObjectView(doc).if_contains(kv.key()), kv.value(),
                    "json." + std::string(kv.key()));
  }
}

TEST(CompactTreeTest, PathReadsAgreeWithTheBoostJsonOnes) {
  const json::object doc = ParsePod();
  CompactTree tree = CompactTree::Build(doc);
  for (ObjectView o : {tree.root(), ObjectView(doc)}) {
    EXPECT_EQ(FindString(o, {"spec", "nodeName"}), "node-00042");
    EXPECT_EQ(FindString(o, {"spec", "missing"}, "fallback"), "fallback");
    EXPECT_EQ(FindString(o, {"spec", "nodeName", "deeper"}, "x"), "x");
    EXPECT_EQ(FindInt(o, {"spec", "terminationGracePeriodSeconds"}), 30);
    EXPECT_EQ(FindInt(o, {"spec", "priority"}), -2000000000);
    EXPECT_EQ(FindInt(o, {"spec", "weight"}), 0);  // 0.5, as FindInt converts doubles
    EXPECT_EQ(FindInt(o, {"spec", "nodeName"}, 7), 7);
    EXPECT_TRUE(FindBool(o, {"spec", "enableServiceLinks"}));
    EXPECT_FALSE(FindBool(o, {"spec", "hostNetwork"}, true));
    EXPECT_EQ(FindArray(o, {"status", "conditions"}).size(), 2u);
    EXPECT_TRUE(FindArray(o, {"spec", "volumes"}).empty());
    EXPECT_TRUE(static_cast<bool>(FindArray(o, {"spec", "volumes"})));
    EXPECT_FALSE(FindArray(o, {"spec", "nodeName"}));
    EXPECT_EQ(FindObject(o, {"spec", "nodeSelector"}).if_contains("k00").if_string(), "z");
    EXPECT_EQ(FindObject(o, {"spec", "nodeSelector"}).if_contains("k17").if_string(), "q");
    EXPECT_FALSE(FindObject(o, {"spec", "nodeSelector"}).contains("k18"));
    EXPECT_TRUE(FindObject(o, {"spec", "securityContext"}).empty());
    EXPECT_TRUE(Find(o, {"spec", "overhead"}).is_null());
    EXPECT_FALSE(Find(o, {}));
    // What FindInt would have made of them, on either form.
    EXPECT_EQ(FindInt(o, {"spec", "limit"}), FindInt(doc, {"spec", "limit"}));
    EXPECT_EQ(FindInt(o, {"spec", "below"}), FindInt(doc, {"spec", "below"}));
    EXPECT_EQ(FindInt(o, {"spec", "above"}), FindInt(doc, {"spec", "above"}));
    EXPECT_EQ(FindInt(o, {"spec", "big"}), FindInt(doc, {"spec", "big"}));
  }
}

TEST(CompactTreeTest, ComparesEqualToItsSourceAndUnequalToAChangedOne) {
  const json::object doc = ParsePod();
  json::object changed = doc;
  changed["status"].as_object()["phase"] = "Succeeded";
  json::object reordered;
  for (auto it = doc.end(); it != doc.begin();) {
    --it;
    reordered.emplace(it->key(), it->value());
  }
  CompactTree a = CompactTree::Build(doc);
  CompactTree b = CompactTree::Build(changed);
  EXPECT_TRUE(a.root() == ObjectView(doc));
  EXPECT_TRUE(a.root() == CompactTree::Build(reordered).root());  // order does not matter
  EXPECT_FALSE(a.root() == b.root());
  EXPECT_FALSE(b.root() == ObjectView(doc));
  EXPECT_TRUE(Find(a.root(), {"spec"}) == Find(ObjectView(doc), {"spec"}));
  EXPECT_FALSE(Find(a.root(), {"status"}) == Find(ObjectView(changed), {"status"}));
  EXPECT_TRUE(View() == View());
  EXPECT_FALSE(Find(a.root(), {"spec"}) == View());
}

TEST(CompactTreeTest, APodIsAThirdOfItsBoostJsonTree) {
  CompactTree tree = CompactTree::Build(ParsePod());
  // The text is ~1,900 bytes; equal strings are stored once and keys are interned.
  EXPECT_LT(tree.bytes(), 1700u);
  EXPECT_GT(KeyTableSize().entries, 40u);
}

TEST(CompactTreeTest, KeysThatAreNotInternedAreStoredInTheTree) {
  const std::string long_key(kMaxInternedKey + 1, 'k');
  json::object doc{{long_key, 1}, {"short", 2}};
  CompactTree tree = CompactTree::Build(doc);
  EXPECT_EQ(tree.root().if_contains(long_key).if_int64(), 1);
  EXPECT_EQ(tree.root().member(0).key(), long_key);
  EXPECT_EQ(ToJson(tree.root()), doc);
}

TEST(CompactObjectTest, AccessorsReadTheCompactFormWithoutBuildingATree) {
  Object obj = Object::Compact(ParsePod());
  ASSERT_TRUE(obj.is_compact());
  const uint64_t before = CompactMaterializations();
  EXPECT_EQ(obj.kind(), "Pod");
  EXPECT_EQ(obj.api_version(), "v1");
  EXPECT_EQ(obj.name(), "web-7d4b9c8f6d-x2k9p");
  EXPECT_EQ(obj.namespace_(), "default");
  EXPECT_EQ(obj.uid(), "0f8e6c1a-3b2d-4e5f-8a9b-1c2d3e4f5a6b");
  EXPECT_EQ(obj.resource_version(), "123456");
  EXPECT_EQ(obj.generation(), 3);
  EXPECT_EQ(obj.label("app"), "web");
  EXPECT_EQ(obj.label("nope"), std::nullopt);
  EXPECT_EQ(obj.annotation("note"), "");
  EXPECT_TRUE(obj.HasFinalizer("example.com/keep"));
  EXPECT_FALSE(obj.HasFinalizer("example.com/other"));
  EXPECT_EQ(obj.owner_references().size(), 1u);
  EXPECT_EQ(obj.key().name, "web-7d4b9c8f6d-x2k9p");
  Object copy = obj;  // shares the tree
  EXPECT_TRUE(copy.is_compact());
  EXPECT_EQ(copy.Serialize(), json::serialize(ParsePod()));
  EXPECT_EQ(CompactMaterializations(), before);
}

TEST(CompactObjectTest, DocBuildsTheTreeOnceAndMutationTurnsItPlain) {
  Object obj = Object::Compact(ParsePod());
  const uint64_t before = CompactMaterializations();
  const json::object& doc = obj.doc();
  EXPECT_EQ(doc, ParsePod());
  EXPECT_EQ(&obj.doc(), &doc);
  EXPECT_EQ(obj.doc().at("metadata").at("labels").at("app"), "web");
  EXPECT_EQ(CompactMaterializations(), before + 1);

  Object copy = obj;
  copy.set_name("renamed");
  EXPECT_FALSE(copy.is_compact());
  EXPECT_EQ(copy.name(), "renamed");
  EXPECT_EQ(obj.name(), "web-7d4b9c8f6d-x2k9p");
  Object moved = std::move(obj);
  EXPECT_EQ(&moved.doc(), &doc);  // the built tree moves with the object
}

TEST(CompactObjectTest, ReadersOnManyThreadsShareOneBuiltTree) {
  const Object obj = Object::Compact(ParsePod());
  const uint64_t before = CompactMaterializations();
  std::vector<std::thread> readers;
  std::vector<const json::object*> seen(8);
  for (size_t i = 0; i < seen.size(); ++i) {
    readers.emplace_back([&, i] {
      EXPECT_EQ(FindString(obj.view(), {"spec", "nodeName"}), "node-00042");
      seen[i] = &obj.doc();
    });
  }
  for (std::thread& t : readers) t.join();
  for (const json::object* s : seen) EXPECT_EQ(s, seen[0]);
  EXPECT_EQ(CompactMaterializations(), before + 1);
}

TEST(CompactTreeTest, TreesBuiltOnManyThreadsShareTheKeyTable) {
  std::vector<std::thread> builders;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    builders.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        json::object doc{{"shared", i}, {"key-" + std::to_string(t) + "-" + std::to_string(i), t}};
        CompactTree tree = CompactTree::Build(doc);
        if (ToJson(tree.root()) != doc) ++wrong;
      }
    });
  }
  for (std::thread& t : builders) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// A text no earlier test (or run of this test) has built: the value table is process-wide.
std::string FreshText(std::string_view what) {
  static std::atomic<int> next{0};
  return std::string(what) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++next);
}

TEST(CompactTreeTest, AValueThatRecursAcrossTreesIsStoredOnceForAll) {
  const std::string recurring = FreshText("registry.example/recurring:1.0");
  const size_t values_before = ValueTableSize().entries;
  std::vector<CompactTree> trees;
  for (int i = 0; i < 40; ++i) {
    json::object doc{{"image", recurring}, {"name", FreshText("pod")}};
    trees.push_back(CompactTree::Build(doc));
    EXPECT_EQ(ToJson(trees.back().root()), doc);
  }
  // Only the recurring value went to the table (each name was built into one tree).
  EXPECT_EQ(ValueTableSize().entries, values_before + 1);
  // The first trees hold the value's bytes, the last ones name it.
  EXPECT_EQ(trees.front().bytes() - trees.back().bytes(), 4 + (recurring.size() + 3) / 4 * 4);
  EXPECT_EQ(trees.back().root().if_contains("image").if_string(), recurring);
  // Either form reads and compares the same.
  EXPECT_TRUE(trees.front().root().if_contains("image") ==
              trees.back().root().if_contains("image"));
}

TEST(CompactTreeTest, TimesAreNeverInternedHoweverOftenTheyRecur) {
  // A time no other test builds: the table must not grow with a cluster's clock.
  const std::string time = "2099-01-01T00:00:" + std::to_string(10 + ::getpid() % 50) + "Z";
  const size_t values_before = ValueTableSize().entries;
  for (int i = 0; i < 40; ++i) {
    json::object doc{{"creationTimestamp", time}};
    CompactTree tree = CompactTree::Build(doc);
    EXPECT_EQ(tree.root().if_contains("creationTimestamp").if_string(), time);
  }
  EXPECT_EQ(ValueTableSize().entries, values_before);
}

TEST(CompactTreeTest, TreesBuiltOnManyThreadsShareTheValueTable) {
  const std::string recurring = FreshText("shared-value");
  std::vector<std::thread> builders;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    builders.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        json::object doc{{"image", recurring}, {"n", i}};
        CompactTree tree = CompactTree::Build(doc);
        if (ToJson(tree.root()) != doc) ++wrong;
      }
    });
  }
  for (std::thread& t : builders) t.join();
  EXPECT_EQ(wrong.load(), 0);
  CompactTree last = CompactTree::Build(json::object{{"image", recurring}});
  EXPECT_EQ(last.bytes(), CompactTree::Build(json::object{{"image", ""}}).bytes());
}

}  // namespace
}  // namespace converge::api
