// The disruption controller's sync through fakes: the caches are plain Indexers the test fills,
// status writes go to FakeApi, time is a FakeClock.
#include "controllers/disruption/disruption_controller.h"

#include <gtest/gtest.h>

#include "controllers/common/fake_api.h"
#include "controllers/common/test_objects.h"

namespace converge::controllers::disruption {
namespace {

namespace json = boost::json;
using testing::MakeOwner;
using testing::MakePod;
using testing::MakeReplicaSet;

class DisruptionSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DisruptionControllerOptions o;
    o.client = api_.client();
    o.budgets = &budgets_;
    o.pods = &pods_;
    o.replica_sets = &replica_sets_;
    o.deployments = &deployments_;
    o.clock = &clock_;
    o.enqueue = [this](const api::ObjectKey& k) { enqueued_.push_back(k.ToString()); };
    controller_ = std::make_unique<DisruptionController>(std::move(o));
  }

  // Stores the budget in the fake server and in the cache, as an informer would.
  void SetBudget(const std::string& spec) {
    auto parsed = api::Object::Parse(
        R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web",)"
        R"("namespace":"default","generation":1},"spec":)" +
        spec + "}");
    ASSERT_TRUE(parsed.ok());
    budgets_.Upsert(std::make_shared<const api::Object>(api_.Put(kBudgets, *parsed)));
  }
  void RefreshBudget() {
    budgets_.Upsert(std::make_shared<const api::Object>(*api_.Get(kBudgets, key_)));
  }
  void AddPods(int n, const OwnerRef& owner) {
    for (int i = 0; i < n; ++i) {
      pods_.Upsert(MakePod({.name = "web-" + std::to_string(i), .ready_since = 0, .owner = owner}));
    }
  }
  json::object WrittenStatus() {
    auto puts = api_.RequestsOf("PUT", "/status");
    EXPECT_FALSE(puts.empty());
    if (puts.empty()) return {};
    return json::parse(puts.back().body).as_object().at("status").as_object();
  }

  const api::ObjectKey key_{"default", "web"};
  util::FakeClock clock_;
  testing::FakeApi api_;
  client::Indexer budgets_;
  client::Indexer pods_;
  client::Indexer replica_sets_;
  client::Indexer deployments_;
  std::vector<std::string> enqueued_;
  std::unique_ptr<DisruptionController> controller_;
};

TEST_F(DisruptionSyncTest, WritesStatusOnceAndResolvesTheDeploymentBehindAReplicaSet) {
  api::Object deployment = MakeOwner("Deployment", "web", "deploy-uid");
  deployment.mutable_doc()["spec"] = json::object{{"replicas", 4}};
  deployments_.Upsert(std::make_shared<const api::Object>(deployment));
  const OwnerRef deployment_ref = NewControllerRef(deployment, {"apps", "v1", "Deployment"});
  api::ObjectPtr rs = MakeReplicaSet({.replicas = 3, .owner = deployment_ref});
  replica_sets_.Upsert(rs);
  AddPods(3, NewControllerRef(*rs, {"apps", "v1", "ReplicaSet"}));
  SetBudget(R"({"maxUnavailable":"25%","selector":{"matchLabels":{"app":"web"}}})");

  client::ReconcileResult r = controller_->Sync(key_);
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  json::object status = WrittenStatus();
  EXPECT_EQ(api::FindInt(status, {"expectedPods"}), 4);  // the Deployment's replicas, not 3
  EXPECT_EQ(api::FindInt(status, {"desiredHealthy"}), 3);
  EXPECT_EQ(api::FindInt(status, {"currentHealthy"}), 3);
  EXPECT_EQ(api::FindInt(status, {"disruptionsAllowed"}), 0);

  // The informer delivers the written status: nothing more to write.
  RefreshBudget();
  api_.ClearRequests();
  r = controller_->Sync(key_);
  EXPECT_TRUE(r.error.ok());
  EXPECT_TRUE(api_.RequestsOf("PUT").empty());
}

TEST_F(DisruptionSyncTest, AnEvictedPodIsRecheckedWhenItsEntryExpires) {
  api::ObjectPtr rs = MakeReplicaSet({.replicas = 3});
  replica_sets_.Upsert(rs);
  AddPods(3, NewControllerRef(*rs, {"apps", "v1", "ReplicaSet"}));
  SetBudget(R"({"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}})");
  // The eviction handler recorded web-0 30 s ago.
  api::Object budget = *api_.Get(kBudgets, key_);
  budget.mutable_doc()["status"] = json::object{
      {"disruptedPods",
       json::object{{"web-0", util::FormatRfc3339(clock_.WallNow() - std::chrono::seconds(30))}}}};
  budgets_.Upsert(std::make_shared<const api::Object>(api_.Put(kBudgets, budget)));

  client::ReconcileResult r = controller_->Sync(key_);
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(api::FindInt(WrittenStatus(), {"currentHealthy"}), 2);
  // Checked again when the entry expires: 120 s after it was written (to the second).
  EXPECT_GT(r.requeue_after, std::chrono::seconds(89));
  EXPECT_LE(r.requeue_after, std::chrono::seconds(90));
}

TEST_F(DisruptionSyncTest, PodChangesWakeTheBudgetsThatSelectThem) {
  SetBudget(R"({"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}})");
  controller_->OnPodChange(*MakePod({.name = "a"}));
  controller_->OnPodChange(*MakePod({.name = "b", .labels = {{"app", "db"}}}));
  EXPECT_EQ(enqueued_, std::vector<std::string>{"default/web"});
}

}  // namespace
}  // namespace converge::controllers::disruption
