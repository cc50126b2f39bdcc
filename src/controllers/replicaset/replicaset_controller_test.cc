// One sync test of the ReplicaSet controller through fakes: the caches are plain Indexers the
// test fills, pods go through FakePodControl, status writes through FakeApi, time is a FakeClock.
#include "controllers/replicaset/replicaset_controller.h"

#include <gtest/gtest.h>

#include "controllers/common/fake_api.h"
#include "controllers/common/fake_pod_control.h"
#include "controllers/common/test_objects.h"
#include "controllers/replicaset/decide.h"

namespace converge::controllers::replicaset {
namespace {

namespace json = boost::json;
using testing::MakePod;
using testing::MakeReplicaSet;

class ReplicaSetSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ReplicaSetControllerOptions o;
    o.client = api_.client();
    o.replica_sets = &rs_cache_;
    o.pods = &pod_cache_;
    o.pod_control = &pods_;
    o.clock = &clock_;
    o.enqueue = [this](const api::ObjectKey& k) { enqueued_.push_back(k.ToString()); };
    o.enqueue_after = [this](const api::ObjectKey& k, util::Clock::Duration) {
      enqueued_.push_back("after:" + k.ToString());
    };
    controller_ = std::make_unique<ReplicaSetController>(std::move(o));
  }

  // Stores the ReplicaSet in the fake server and in the cache, as an informer would.
  api::ObjectPtr SetReplicaSet(api::ObjectPtr rs) {
    api::Object stored = api_.Put(kReplicaSets, *rs);
    auto ptr = std::make_shared<const api::Object>(stored);
    rs_cache_.Upsert(ptr);
    return ptr;
  }
  // What the informer would deliver after the server accepted our writes: the server's copy.
  api::ObjectPtr RefreshReplicaSet() {
    auto ptr = std::make_shared<const api::Object>(*api_.Get(kReplicaSets, key_));
    rs_cache_.Upsert(ptr);
    return ptr;
  }
  // The pods FakePodControl created so far appear in the cache (the watch caught up).
  void ObserveCreatedPods() {
    for (api::Object pod : pods_.created()) {
      pod.set_uid("uid-" + std::string(pod.name()));
      pod.set_resource_version("1");
      auto ptr = std::make_shared<const api::Object>(std::move(pod));
      if (pod_cache_.Get(ptr->key()) != nullptr) continue;
      pod_cache_.Upsert(ptr);
      controller_->OnPodAdd(ptr);
    }
  }
  json::object WrittenStatus() {
    auto puts = api_.RequestsOf("PUT", "/status");
    EXPECT_FALSE(puts.empty());
    if (puts.empty()) return {};
    return json::parse(puts.back().body).as_object().at("status").as_object();
  }

  util::FakeClock clock_;
  testing::FakeApi api_;
  client::Indexer rs_cache_;
  client::Indexer pod_cache_;
  FakePodControl pods_;
  std::vector<std::string> enqueued_;
  std::unique_ptr<ReplicaSetController> controller_;
  const api::ObjectKey key_{"default", "web"};
};

TEST_F(ReplicaSetSyncTest, CreatesOnceThenWaitsForTheCache) {
  SetReplicaSet(MakeReplicaSet({.replicas = 3}));
  client::ReconcileResult r = controller_->Sync(key_);
  ASSERT_TRUE(r.error.ok()) << r.error.ToString();
  ASSERT_EQ(pods_.created().size(), 3u);
  for (const OwnerRef& ref : pods_.controller_refs()) {
    EXPECT_EQ(ref.kind, "ReplicaSet");
    EXPECT_EQ(ref.uid, "rs-uid");
    EXPECT_TRUE(ref.controller);
  }
  EXPECT_EQ(pods_.created()[0].generate_name(), "web-");
  EXPECT_EQ(controller_->expectations().Get(key_)->adds, 3);
  // Status: no pods seen yet, generation 1 observed.
  EXPECT_EQ(WrittenStatus(), json::parse(R"({"replicas":0,"observedGeneration":1})"));

  // Woken again before the pod events arrive (e.g. by its own status update): the cache still
  // shows no pods, but the expectations hold it back.
  RefreshReplicaSet();
  api_.ClearRequests();
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  EXPECT_EQ(pods_.created().size(), 3u) << "no over-creation from a stale cache";
  EXPECT_TRUE(api_.RequestsOf("PUT").empty()) << "nothing changed: no status write";

  // The watch catches up: three creations observed, expectations satisfied, status counts 3.
  ObserveCreatedPods();
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations(key_));
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  EXPECT_EQ(pods_.created().size(), 3u);
  EXPECT_EQ(WrittenStatus(),
            json::parse(R"({"replicas":3,"fullyLabeledReplicas":3,"observedGeneration":1})"));
}

TEST_F(ReplicaSetSyncTest, ScalesDownTheCheapestPodsAndTracksTheirKeys) {
  api::ObjectPtr rs = SetReplicaSet(MakeReplicaSet({.replicas = 1}));
  OwnerRef ref = NewControllerRef(*rs, kReplicaSetKind);
  for (auto& p : {MakePod({.name = "ready", .ready_since = 1, .node = "n", .owner = ref}),
                  MakePod({.name = "pending", .phase = "Pending", .owner = ref}),
                  MakePod({.name = "unready", .node = "n", .owner = ref})}) {
    pod_cache_.Upsert(p);
  }
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  auto deleted = pods_.deleted();
  ASSERT_EQ(deleted.size(), 2u);
  std::set<std::string> names{deleted[0].name, deleted[1].name};
  EXPECT_EQ(names, (std::set<std::string>{"pending", "unready"}));
  EXPECT_EQ(controller_->expectations().Get(key_)->dels, 2);
  // The pod seen twice (terminating, then gone) lowers the count once.
  api::ObjectPtr pending = pod_cache_.Get({"default", "pending"});
  controller_->OnPodDelete({pending->key(), pending, false});
  controller_->OnPodDelete({pending->key(), pending, false});
  EXPECT_EQ(controller_->expectations().Get(key_)->dels, 1);
  EXPECT_FALSE(controller_->expectations().SatisfiedExpectations(key_));
}

TEST_F(ReplicaSetSyncTest, CreateFailureSetsReplicaFailureAndForgetsExpectations) {
  SetReplicaSet(MakeReplicaSet({.replicas = 5}));
  pods_.set_create_limit(1);  // the first create works, the 2-batch fails
  client::ReconcileResult r = controller_->Sync(key_);
  EXPECT_FALSE(r.error.ok());
  EXPECT_EQ(pods_.create_attempts(), 3) << "slow start: batches 1 and 2, then stop";
  // 5 expected; 1 succeeded; the other 4 will never be observed.
  EXPECT_EQ(controller_->expectations().Get(key_)->adds, 1);
  json::object st = WrittenStatus();
  ASSERT_TRUE(st.contains("conditions"));
  const json::object& c = st.at("conditions").as_array()[0].as_object();
  EXPECT_EQ(c.at("type"), "ReplicaFailure");
  EXPECT_EQ(c.at("reason"), "FailedCreate");
  EXPECT_EQ(c.at("message"), "FakePodControl: create limit reached");

  // Once creates work again the condition goes away.
  ObserveCreatedPods();
  RefreshReplicaSet();
  pods_.set_create_limit(-1);
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  EXPECT_EQ(pods_.created().size(), 5u);
  EXPECT_FALSE(WrittenStatus().contains("conditions"));
}

TEST_F(ReplicaSetSyncTest, StatusConflictRereadsAndRetriesOnce) {
  SetReplicaSet(MakeReplicaSet({.replicas = 0}));
  api_.FailNext("PUT", "/replicasets/web/status", 409, "Conflict");
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  auto reqs = api_.requests();
  std::vector<std::string> verbs;
  for (const auto& q : reqs) verbs.push_back(q.method + " " + q.path);
  EXPECT_EQ(verbs, (std::vector<std::string>{
                       "PUT /apis/apps/v1/namespaces/default/replicasets/web/status",
                       "GET /apis/apps/v1/namespaces/default/replicasets/web",
                       "PUT /apis/apps/v1/namespaces/default/replicasets/web/status"}));
  EXPECT_EQ(api_.Get(kReplicaSets, key_)->doc().at("status").at("observedGeneration"), 1);
}

TEST_F(ReplicaSetSyncTest, AdoptsMatchingOrphansAndReleasesStrays) {
  api::ObjectPtr rs = SetReplicaSet(MakeReplicaSet({.replicas = 2}));
  OwnerRef ref = NewControllerRef(*rs, kReplicaSetKind);
  pod_cache_.Upsert(MakePod({.name = "orphan"}));
  pod_cache_.Upsert(MakePod({.name = "stray", .labels = {{"app", "other"}}, .owner = ref}));
  pod_cache_.Upsert(MakePod({.name = "mine", .owner = ref}));
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  std::map<std::string, std::string> patches;
  for (const auto& p : pods_.patched()) patches[p.name] = p.patch;
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_NE(patches["orphan"].find("\"controller\":true"), std::string::npos);
  EXPECT_NE(patches["stray"].find("\"$patch\":\"delete\""), std::string::npos);
  // The adopted orphan and "mine" make 2: nothing to create.
  EXPECT_EQ(pods_.create_attempts(), 0);
  // Adoption first re-read the ReplicaSet from the server (not the cache).
  EXPECT_EQ(api_.RequestsOf("GET", "/replicasets/web").size(), 1u);
}

TEST_F(ReplicaSetSyncTest, HandlersResolveOwnersAndEnqueue) {
  api::ObjectPtr rs = SetReplicaSet(MakeReplicaSet({.replicas = 1, .min_ready_seconds = 5}));
  OwnerRef ref = NewControllerRef(*rs, kReplicaSetKind);
  controller_->expectations().ExpectCreations(key_, 1);
  api::ObjectPtr pod = MakePod({.name = "p", .owner = ref});
  controller_->OnPodAdd(pod);
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations(key_));
  EXPECT_EQ(enqueued_, (std::vector<std::string>{"default/web"}));

  // Becoming ready with minReadySeconds: a timed re-check too.
  enqueued_.clear();
  api::Object ready = *MakePod({.name = "p", .ready_since = 1, .owner = ref});
  ready.set_resource_version("2");
  controller_->OnPodUpdate(pod, std::make_shared<const api::Object>(ready));
  EXPECT_EQ(enqueued_, (std::vector<std::string>{"default/web", "after:default/web"}));

  // A pod owned by another incarnation (different uid) wakes nobody.
  enqueued_.clear();
  OwnerRef stale = ref;
  stale.uid = "old";
  controller_->OnPodAdd(MakePod({.name = "q", .owner = stale}));
  EXPECT_TRUE(enqueued_.empty());

  // An orphan wakes every ReplicaSet that selects it.
  controller_->OnPodAdd(MakePod({.name = "r"}));
  EXPECT_EQ(enqueued_, (std::vector<std::string>{"default/web"}));

  // A deleted ReplicaSet forgets its expectations.
  controller_->expectations().ExpectCreations(key_, 4);
  controller_->OnReplicaSetDelete({key_, rs, false});
  EXPECT_FALSE(controller_->expectations().Get(key_).has_value());
}

TEST_F(ReplicaSetSyncTest, StopMidSyncSendsNoMoreCreatesAndWritesNoStatus) {
  SetReplicaSet(MakeReplicaSet({.replicas = 10}));
  std::stop_source stop;
  pods_.set_on_create([&] { stop.request_stop(); });  // stop once the first create went out
  client::ReconcileResult r = controller_->Sync(key_, stop.get_token());
  EXPECT_FALSE(r.error.ok());
  EXPECT_EQ(pods_.created().size(), 1u) << "batches after the stop are never sent";
  EXPECT_EQ(controller_->expectations().Get(key_)->adds, 1) << "only the sent create is expected";
  EXPECT_TRUE(api_.RequestsOf("PUT").empty()) << "stopping is not a ReplicaFailure";
}

// A Deployment scales the ReplicaSet down while its creates are still going out in batches: the
// batches after the change are not sent, and that is not a failure.
TEST_F(ReplicaSetSyncTest, SpecLoweredMidSyncSendsNoMoreCreates) {
  SetReplicaSet(MakeReplicaSet({.replicas = 10}));
  bool lowered = false;
  pods_.set_on_create([&] {
    if (lowered) return;
    lowered = true;  // the first create (a batch of one) went out; then the spec drops to 1
    auto rs = std::make_shared<api::Object>(*rs_cache_.Get(key_));
    rs->mutable_doc()["spec"].as_object()["replicas"] = 1;
    rs_cache_.Upsert(rs);
  });
  client::ReconcileResult r = controller_->Sync(key_);
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_EQ(pods_.created().size(), 1u) << "batches after the change are never sent";
  EXPECT_EQ(controller_->expectations().Get(key_)->adds, 1) << "only the sent create is expected";
  EXPECT_TRUE(api_.RequestsOf("PUT", "/status").empty() || !WrittenStatus().contains("conditions"))
      << "a lowered spec is not a ReplicaFailure";
}

TEST_F(ReplicaSetSyncTest, GoneReplicaSetIsDone) {
  controller_->expectations().ExpectCreations(key_, 2);
  EXPECT_TRUE(controller_->Sync(key_).error.ok());
  EXPECT_FALSE(controller_->expectations().Get(key_).has_value());
  EXPECT_TRUE(api_.requests().empty());
}

}  // namespace
}  // namespace converge::controllers::replicaset
