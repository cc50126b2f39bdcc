// One sync test of the Deployment controller through fakes: caches are Indexers the test fills as
// informers would, writes go to FakeApi, events to a RecordingEventSink, time is a FakeClock.
#include "controllers/deployment/deployment_controller.h"

#include <gtest/gtest.h>

#include "controllers/common/fake_api.h"
#include "controllers/common/recording_event_sink.h"
#include "controllers/deployment/decide.h"
#include "controllers/deployment/deployment_test_objects.h"

namespace converge::controllers::deployment {
namespace {

namespace json = boost::json;
using testing::MakeDeployment;
using testing::MakeOwnedReplicaSet;
using testing::RsName;

class DeploymentSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeploymentControllerOptions o;
    o.client = api_.client();
    o.deployments = &d_cache_;
    o.replica_sets = &rs_cache_;
    o.pods = &pod_cache_;
    o.recorder = &recorder_;
    o.clock = &clock_;
    o.enqueue = [this](const api::ObjectKey& k) { enqueued_.push_back(k.ToString()); };
    controller_ = std::make_unique<DeploymentController>(std::move(o));
  }

  // Stores an object in the fake server and its cache, as the informer would see it.
  api::ObjectPtr Put(const api::GroupVersionResource& gvr, client::Indexer& cache,
                     const api::Object& obj) {
    auto ptr = std::make_shared<const api::Object>(api_.Put(gvr, obj));
    cache.Upsert(ptr);
    return ptr;
  }
  // The informers catch up with everything the server holds.
  void CatchUp() {
    for (const api::Object& d : api_.List(kDeployments)) {
      d_cache_.Upsert(std::make_shared<const api::Object>(d));
    }
    for (const api::Object& rs : api_.List(kReplicaSets)) {
      rs_cache_.Upsert(std::make_shared<const api::Object>(rs));
    }
  }
  std::vector<std::string> Writes() {
    std::vector<std::string> out;
    for (const auto& r : api_.requests()) {
      if (r.method != "GET") out.push_back(r.method + " " + r.path);
    }
    return out;
  }
  std::vector<std::string> EventSummaries() {
    recorder_.Flush();
    return sink_.Summaries();
  }

  util::FakeClock clock_;
  controllers::testing::FakeApi api_;
  client::Indexer d_cache_, rs_cache_, pod_cache_;
  RecordingEventSink sink_;
  client::EventRecorder recorder_{{.source = {"deployment-controller", ""}, .sink = &sink_}};
  std::vector<std::string> enqueued_;
  std::unique_ptr<DeploymentController> controller_;
  const api::ObjectKey key_{"default", "web"};
};

TEST_F(DeploymentSyncTest, CreatesReplicaSetThenSettlesWithoutWrites) {
  Put(kDeployments, d_cache_, *MakeDeployment({.replicas = 2}));
  client::ReconcileResult r = controller_->Sync(key_);
  ASSERT_TRUE(r.error.ok()) << r.error.ToString();
  const std::string rs = RsName("nginx:1");
  EXPECT_EQ(Writes(), (std::vector<std::string>{
                          "POST /apis/apps/v1/namespaces/default/replicasets",
                          "PUT /apis/apps/v1/namespaces/default/deployments/web/status"}));
  std::optional<api::Object> created = api_.Get(kReplicaSets, {"default", rs});
  ASSERT_TRUE(created.has_value());
  EXPECT_EQ(Replicas(*created), 2);
  EXPECT_EQ(EventSummaries(),
            (std::vector<std::string>{"ScalingReplicaSet: Scaled up replica set " + rs +
                                      " from 0 to 2"}));

  // The ReplicaSet controller reports its pods; the Deployment reports them in turn.
  api::Object with_pods = *created;
  with_pods.mutable_doc()["status"] = json::object{
      {"replicas", 2}, {"readyReplicas", 2}, {"availableReplicas", 2}, {"observedGeneration", 1}};
  api_.Put(kReplicaSets, with_pods);
  CatchUp();
  api_.ClearRequests();
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  EXPECT_EQ(
      Writes(),
      (std::vector<std::string>{"PUT /apis/apps/v1/namespaces/default/deployments/web/status"}));
  DeploymentStatus st = DeploymentStatus::FromObject(*api_.Get(kDeployments, key_));
  EXPECT_EQ(st.available_replicas, 2);
  EXPECT_EQ(FindCondition(st.conditions, kProgressing)->reason, kNewRSAvailableReason);

  // Nothing changed since: no write at all.
  CatchUp();
  api_.ClearRequests();
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  EXPECT_TRUE(Writes().empty());
}

TEST_F(DeploymentSyncTest, AlreadyExistsOfOurOwnReplicaSetRetriesWithoutCollision) {
  api::ObjectPtr d = Put(kDeployments, d_cache_, *MakeDeployment({}));
  // The server has our ReplicaSet (a previous sync created it) but the cache has not seen it.
  api_.Put(kReplicaSets, *MakeOwnedReplicaSet(*d, {}));
  client::ReconcileResult r = controller_->Sync(key_);
  EXPECT_FALSE(r.error.ok()) << "retried with backoff; the next sync sees it in the cache";
  EXPECT_FALSE(DeploymentStatus::FromObject(*api_.Get(kDeployments, key_)).collision_count);
  CatchUp();
  api_.ClearRequests();
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  for (const std::string& w : Writes()) EXPECT_EQ(w.find("POST"), std::string::npos) << w;
}

TEST_F(DeploymentSyncTest, HashCollisionBumpsCollisionCount) {
  api::ObjectPtr d = Put(kDeployments, d_cache_, *MakeDeployment({}));
  // Someone else's ReplicaSet holds the name the template hashes to.
  api::Object squatter = *MakeOwnedReplicaSet(*d, {});
  squatter.mutable_metadata().erase("ownerReferences");
  squatter.mutable_doc()["spec"].as_object()["template"] = testing::PodTemplateFor("other");
  squatter.mutable_doc()["spec"].as_object()["selector"] =
      json::object{{"matchLabels", json::object{{"app", "other"}}}};
  squatter.mutable_metadata()["labels"] = json::object{{"app", "other"}};
  Put(kReplicaSets, rs_cache_, squatter);
  EXPECT_FALSE(controller_->Sync(key_).error.ok());
  EXPECT_EQ(DeploymentStatus::FromObject(*api_.Get(kDeployments, key_)).collision_count, 1);
  // With the new count the name differs and the create succeeds.
  CatchUp();
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  EXPECT_EQ(api_.List(kReplicaSets).size(), 2u);
}

TEST_F(DeploymentSyncTest, CreateFailureReportsReplicaSetCreateError) {
  Put(kDeployments, d_cache_, *MakeDeployment({}));
  api_.FailNext("POST", "/replicasets", 403, "Forbidden", "replicasets is forbidden: quota");
  EXPECT_FALSE(controller_->Sync(key_).error.ok());
  DeploymentStatus st = DeploymentStatus::FromObject(*api_.Get(kDeployments, key_));
  const Condition* c = FindCondition(st.conditions, kProgressing);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, kFailedRSCreateReason);
  std::vector<std::string> events = EventSummaries();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rfind("ReplicaSetCreateError: Failed to create new replica set", 0), 0u)
      << events[0];
}

TEST_F(DeploymentSyncTest, AdoptsOrphanReplicaSetsThatMatch) {
  api::ObjectPtr d = Put(kDeployments, d_cache_, *MakeDeployment({}));
  api::Object orphan = *MakeOwnedReplicaSet(*d, {});
  orphan.mutable_metadata().erase("ownerReferences");
  Put(kReplicaSets, rs_cache_, orphan);
  ASSERT_TRUE(controller_->Sync(key_).error.ok());
  auto patches = api_.RequestsOf("PATCH", "/replicasets/");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_NE(patches[0].body.find("\"controller\":true"), std::string::npos);
  EXPECT_TRUE(api_.RequestsOf("POST").empty()) << "the adopted ReplicaSet is the new one";
}

TEST_F(DeploymentSyncTest, HandlersEnqueueTheOwningDeployment) {
  api::ObjectPtr d = Put(kDeployments, d_cache_, *MakeDeployment({}));
  api::ObjectPtr rs = MakeOwnedReplicaSet(*d, {});
  controller_->OnReplicaSetAdd(rs);
  EXPECT_EQ(enqueued_, (std::vector<std::string>{"default/web"}));
  enqueued_.clear();
  // A resync (same resourceVersion) is ignored.
  controller_->OnReplicaSetUpdate(rs, rs);
  EXPECT_TRUE(enqueued_.empty());
  // An orphan wakes the Deployments that select it.
  api::Object orphan = *rs;
  orphan.mutable_metadata().erase("ownerReferences");
  controller_->OnReplicaSetAdd(std::make_shared<const api::Object>(orphan));
  EXPECT_EQ(enqueued_, (std::vector<std::string>{"default/web"}));
  enqueued_.clear();
  // Pod deletions matter to Recreate only.
  Put(kReplicaSets, rs_cache_, *rs);
  OwnerRef rs_ref = NewControllerRef(*rs_cache_.Get(rs->key()), {"apps", "v1", "ReplicaSet"});
  api::ObjectPtr pod = controllers::testing::MakePod({.name = "p", .owner = rs_ref});
  controller_->OnPodDelete({pod->key(), pod, false});
  EXPECT_TRUE(enqueued_.empty());
  Put(kDeployments, d_cache_, *MakeDeployment({.strategy = "Recreate"}));
  controller_->OnPodDelete({pod->key(), pod, false});
  EXPECT_EQ(enqueued_, (std::vector<std::string>{"default/web"}));
}

TEST_F(DeploymentSyncTest, GoneDeploymentIsDone) {
  EXPECT_TRUE(controller_->Sync(key_).error.ok());
  EXPECT_TRUE(api_.requests().empty());
}

}  // namespace
}  // namespace converge::controllers::deployment
