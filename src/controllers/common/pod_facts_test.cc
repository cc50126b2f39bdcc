#include "controllers/common/pod_facts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <new>
#include <vector>

#include "controllers/common/owner_refs.h"
#include "controllers/common/pod_util.h"
#include "controllers/common/test_objects.h"

namespace converge::controllers {
namespace {

using testing::At;
using testing::MakePod;
using testing::PodSpec;

OwnerRef Controller(std::string uid) {
  return OwnerRef{.api_version = "apps/v1",
                  .kind = "ReplicaSet",
                  .name = "web",
                  .uid = std::move(uid),
                  .controller = true};
}

// Every fact equals what the per-object predicates say.
TEST(PodFactsTest, MatchesThePredicates) {
  OwnerRef not_controller = Controller("rs-2");
  not_controller.controller = false;
  OwnerRef no_name = Controller("rs-3");
  no_name.name = "";
  std::vector<api::ObjectPtr> pods = {
      MakePod({.name = "plain"}),
      MakePod({.name = "ready", .ready_since = 10, .owner = Controller("rs-1")}),
      MakePod({.name = "failed", .phase = "Failed", .ready_since = 3}),
      MakePod({.name = "deleting", .deleting = true, .owner = Controller("rs-1")}),
      MakePod({.name = "owned-not-controlled", .owner = not_controller}),
      MakePod({.name = "invalid-ref", .owner = no_name}),
      MakePod({.name = "no-labels", .labels = {}}),
  };
  for (const api::ObjectPtr& pod : pods) {
    SCOPED_TRACE(pod->name());
    PodFacts f = ComputePodFacts(*pod);
    EXPECT_EQ(f.active, IsPodActive(*pod));
    EXPECT_EQ(f.being_deleted, pod->being_deleted());
    EXPECT_EQ(f.ready, IsPodReady(*pod));
    EXPECT_EQ(f.ready_since, PodReadyTime(*pod));
    std::optional<OwnerRef> ref = GetControllerOf(*pod);
    ASSERT_EQ(f.controller_uid.has_value(), ref.has_value());
    if (ref) {
      EXPECT_EQ(*f.controller_uid, ref->uid);
    }
    EXPECT_EQ(f.labels, pod->labels());
    for (int min_ready : {0, 5}) {
      for (int now : {12, 16}) {
        EXPECT_EQ(IsPodAvailable(f, min_ready, At(now)), IsPodAvailable(*pod, min_ready, At(now)))
            << min_ready << " " << now;
      }
    }
  }
  // The cases above cover each answer of each fact.
  EXPECT_TRUE(ComputePodFacts(*pods[1]).ready);
  EXPECT_FALSE(ComputePodFacts(*pods[2]).active);
  EXPECT_TRUE(ComputePodFacts(*pods[3]).being_deleted);
  EXPECT_EQ(ComputePodFacts(*pods[1]).controller_uid, "rs-1");
  EXPECT_FALSE(ComputePodFacts(*pods[4]).controller_uid.has_value());
  EXPECT_FALSE(ComputePodFacts(*pods[5]).controller_uid.has_value());
}

// Equal label keys mean equal labels: the selector memo of a sync relies on it.
TEST(PodFactsTest, LabelKeysIdentifyLabels) {
  auto key = [](std::map<std::string, std::string> labels) {
    return ComputePodFacts(*MakePod({.name = "p", .labels = std::move(labels)})).label_key;
  };
  EXPECT_EQ(key({{"app", "web"}, {"tier", "fe"}}), key({{"app", "web"}, {"tier", "fe"}}));
  const std::vector<std::map<std::string, std::string>> distinct = {
      {},
      {{"app", "web"}},
      {{"app", "we"}},
      {{"ap", "pweb"}},
      {{"app", ""}},
      {{"app", "web"}, {"tier", "fe"}},
      {{"app", "web:3:tier"}},
  };
  for (size_t i = 0; i < distinct.size(); ++i) {
    for (size_t j = i + 1; j < distinct.size(); ++j) {
      EXPECT_NE(key(distinct[i]), key(distinct[j])) << i << " " << j;
    }
  }
  api::Object no_labels = *MakePod({.name = "p", .labels = {}});
  no_labels.mutable_metadata().erase("labels");
  api::Object empty_labels = no_labels;
  empty_labels.mutable_metadata()["labels"] = boost::json::object();
  EXPECT_NE(ComputePodFacts(no_labels).label_key, ComputePodFacts(empty_labels).label_key);
}

TEST(PodFactsCacheTest, AnswersPerObjectVersion) {
  PodFactsCache cache;
  api::ObjectPtr v1 = MakePod({.name = "a"});
  EXPECT_FALSE(cache.Get(v1).ready);
  EXPECT_FALSE(cache.Get(v1).ready);
  EXPECT_EQ(cache.size(), 1u);
  // A new version of the same pod is a new object: its own facts.
  api::ObjectPtr v2 = MakePod({.name = "a", .ready_since = 1});
  EXPECT_TRUE(cache.Get(v2).ready);
  EXPECT_FALSE(cache.Get(v1).ready);
}

TEST(PodFactsCacheTest, AReusedAddressGetsFreshFacts) {
  PodFactsCache cache;
  // Two pods of different readiness, one after the other, at the very same address: each is
  // constructed in place in one buffer and only destroyed (not freed) when released, so the reuse
  // does not depend on the allocator (ASan's quarantine never hands a freed block back soon).
  alignas(api::Object) unsigned char storage[sizeof(api::Object)];
  auto in_place = [&storage](const api::Object& from) {
    return api::ObjectPtr(new (storage) api::Object(from), [](api::Object* p) { p->~Object(); });
  };
  api::ObjectPtr first = in_place(*MakePod({.name = "p"}));
  EXPECT_FALSE(cache.Get(first).ready);
  first.reset();
  api::ObjectPtr second = in_place(*MakePod({.name = "p", .ready_since = 1}));
  ASSERT_EQ(static_cast<const void*>(second.get()), static_cast<const void*>(storage));
  EXPECT_TRUE(cache.Get(second).ready) << "the dead pod's facts were returned";
}

TEST(PodFactsCacheTest, SweepsEntriesOfDeadObjects) {
  PodFactsCache cache;
  std::vector<api::ObjectPtr> live;
  for (int i = 0; i < 10; ++i) {
    live.push_back(MakePod({.name = "live-" + std::to_string(i)}));
    cache.Get(live.back());
  }
  // Thousands of short-lived pods, each held only while it is looked up.
  for (int i = 0; i < 5000; ++i) cache.Get(MakePod({.name = "gone-" + std::to_string(i)}));
  // Swept whenever the memo doubled beyond its slack: far fewer entries than lookups.
  EXPECT_LT(cache.size(), 2500u);
  for (const api::ObjectPtr& pod : live) EXPECT_FALSE(cache.Get(pod).ready);
}

// Cached facts point at one copy of each controller uid and number each label set; both are
// released with the last pod that holds them.
TEST(PodFactsCacheTest, SharesControllerUidsAndNumbersLabelSets) {
  PodFactsCache cache;
  api::ObjectPtr a = MakePod({.name = "a", .owner = Controller("rs-1")});
  api::ObjectPtr b = MakePod({.name = "b", .owner = Controller("rs-1")});
  api::ObjectPtr c = MakePod({.name = "c", .labels = {{"app", "db"}}, .owner = Controller("rs-2")});
  const PodFacts& fa = cache.Get(a);
  const PodFacts& fb = cache.Get(b);
  const PodFacts& fc = cache.Get(c);
  ASSERT_TRUE(fa.controller_uid && fb.controller_uid && fc.controller_uid);
  EXPECT_EQ(*fa.controller_uid, "rs-1");
  EXPECT_EQ(*fc.controller_uid, "rs-2");
  EXPECT_EQ(fa.controller_uid->data(), fb.controller_uid->data()) << "not one shared copy";
  EXPECT_NE(fa.controller_uid->data(), ComputePodFacts(*a).controller_uid->data());
  EXPECT_EQ(cache.distinct_controllers(), 2u);
  EXPECT_NE(fa.label_id, 0u);
  EXPECT_EQ(fa.label_id, fb.label_id);
  EXPECT_NE(fa.label_id, fc.label_id);
  EXPECT_TRUE(fa.label_key.empty());
  EXPECT_EQ(cache.distinct_label_sets(), 2u);
  EXPECT_EQ(fa.labels, a->labels());

  // Thousands of short-lived pods, each with its own labels and controller: once swept, what
  // they held is released, and the numbers of their label sets are handed out again.
  for (int i = 0; i < 5000; ++i) {
    std::string n = std::to_string(i);
    cache.Get(
        MakePod({.name = "gone-" + n, .labels = {{"i", n}}, .owner = Controller("rs-x" + n)}));
  }
  EXPECT_LT(cache.distinct_controllers(), 2500u);
  EXPECT_LT(cache.distinct_label_sets(), 2500u);
  EXPECT_EQ(cache.Get(a).label_id, cache.Get(b).label_id);
  EXPECT_EQ(*cache.Get(a).controller_uid, "rs-1");
  EXPECT_EQ(*cache.Get(c).controller_uid, "rs-2");
  uint32_t max_id = 0;
  for (int i = 0; i < 100; ++i) {
    max_id = std::max(
        max_id, cache.Get(MakePod({.name = "x", .labels = {{"y", std::to_string(i)}}})).label_id);
  }
  EXPECT_LT(max_id, 5000u) << "label set numbers are not reused";
}

// The memo asks the selector once per label set of cached facts (facts of the same set share the
// answer even where their labels pointer differs), and once per pod for facts outside a cache.
TEST(LabelMemoTest, AsksOncePerLabelSetOfCachedFacts) {
  auto selector = api::LabelSelector::FromMap({{"app", "web"}});
  PodFactsCache cache;
  api::ObjectPtr web = MakePod({.name = "web"});
  api::ObjectPtr db = MakePod({.name = "db", .labels = {{"app", "db"}}});
  LabelMemo memo(selector);
  EXPECT_TRUE(memo.Matches(cache.Get(web)));
  EXPECT_FALSE(memo.Matches(cache.Get(db)));
  // Facts numbered as web's but carrying db's labels: answered from the memo, not asked again.
  PodFacts relabeled = cache.Get(web);
  relabeled.labels = db->labels();
  EXPECT_TRUE(memo.Matches(relabeled));
  // Without a number, each pod is asked.
  PodFacts uncached = ComputePodFacts(*db);
  ASSERT_EQ(uncached.label_id, 0u);
  EXPECT_FALSE(memo.Matches(uncached));
  EXPECT_TRUE(memo.Matches(ComputePodFacts(*web)));
  EXPECT_FALSE(memo.Matches(uncached));
}

}  // namespace
}  // namespace converge::controllers
