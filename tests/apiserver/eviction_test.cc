// pods/eviction over HTTP against a live `converge apiserver` (no controllers: the tests write
// pod and PodDisruptionBudget status themselves, as the kubelet and the disruption controller
// would).
#include <gtest/gtest.h>

#include "testing/server.h"

namespace converge {
namespace {

namespace json = boost::json;
using testing::HttpResponse;
using testing::ServerProcess;
using testing::TestClient;

class EvictionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start());
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    client_ = server_->Client();
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "e-";
    for (char c : name.substr(0, 50)) {
      ns_ += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    }
    HttpResponse r = client_->Post(
        "/api/v1/namespaces",
        R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns_ + R"("}})");
    ASSERT_EQ(r.status, 201) << r.body;
  }

  std::string Pods() { return "/api/v1/namespaces/" + ns_ + "/pods"; }
  std::string Budgets() { return "/apis/policy/v1/namespaces/" + ns_ + "/poddisruptionbudgets"; }

  // A pod labelled app=web; phase "" leaves it Pending.
  void CreatePod(const std::string& name, const std::string& phase = "Running", bool ready = true) {
    HttpResponse r = client_->Post(
        Pods(),
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
            R"(","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}})");
    ASSERT_EQ(r.status, 201) << r.body;
    if (phase.empty()) return;
    r = client_->Patch(Pods() + "/" + name + "/status",
                       R"({"status":{"phase":")" + phase +
                           R"(","conditions":[{"type":"Ready","status":")" +
                           (ready ? "True" : "False") + R"("}]}})",
                       "application/merge-patch+json");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  // A budget selecting app=web with this status ("" = none written).
  void CreateBudget(const std::string& name, const std::string& status) {
    HttpResponse r = client_->Post(
        Budgets(),
        R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":")" + name +
            R"("},"spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}}})");
    ASSERT_EQ(r.status, 201) << r.body;
    if (status.empty()) return;
    r = client_->Patch(Budgets() + "/" + name + "/status", R"({"status":)" + status + "}",
                       "application/merge-patch+json");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  HttpResponse Evict(const std::string& name, const std::string& body_name = "") {
    return client_->Post(Pods() + "/" + name + "/eviction",
                         R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":")" +
                             (body_name.empty() ? name : body_name) + R"("}})");
  }
  // Gone, or marked for deletion.
  bool Deleted(const std::string& name) {
    HttpResponse r = client_->Get(Pods() + "/" + name);
    if (r.status == 404) return true;
    return json::parse(r.body).at("metadata").as_object().contains("deletionTimestamp");
  }
  static json::object Parse(const HttpResponse& r) { return json::parse(r.body).as_object(); }

  static ServerProcess* server_;
  std::unique_ptr<TestClient> client_;
  std::string ns_;
};

ServerProcess* EvictionTest::server_ = nullptr;

TEST_F(EvictionTest, WithoutABudgetThePodIsDeleted) {
  CreatePod("a");
  HttpResponse r = Evict("a");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Parse(r).at("status"), "Success");
  EXPECT_TRUE(Deleted("a"));
}

TEST_F(EvictionTest, BadRequestsAndMissingPods) {
  CreatePod("a");
  HttpResponse r = Evict("a", "b");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Parse(r).at("message"), "name in URL does not match name in Eviction object");
  r = Evict("nope");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_FALSE(Deleted("a"));
}

TEST_F(EvictionTest, ABudgetGivesOneDisruptionThenRefuses) {
  CreatePod("a");
  CreatePod("b");
  CreatePod("c");
  CreateBudget("web", R"({"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":3,)"
                      R"("desiredHealthy":2,"expectedPods":3})");
  HttpResponse r = Evict("a");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_TRUE(Deleted("a"));
  json::object budget = Parse(client_->Get(Budgets() + "/web"));
  EXPECT_EQ(budget.at("status").at("disruptionsAllowed"), 0);
  EXPECT_TRUE(budget.at("status").at("disruptedPods").as_object().contains("a"));

  r = Evict("b");
  ASSERT_EQ(r.status, 429) << r.body;
  json::object status = Parse(r);
  EXPECT_EQ(status.at("reason"), "TooManyRequests");
  EXPECT_EQ(status.at("message"),
            "Cannot evict pod as it would violate the pod's disruption budget.");
  const json::object& cause = status.at("details").at("causes").at(0).as_object();
  EXPECT_EQ(cause.at("reason"), "DisruptionBudget");
  EXPECT_EQ(cause.at("message"),
            "The disruption budget web needs 2 healthy pods and has 3 currently");
  EXPECT_FALSE(Deleted("b"));
}

TEST_F(EvictionTest, ABudgetNotYetObservedRefuses) {
  CreatePod("a");
  CreateBudget("web", "");
  HttpResponse r = Evict("a");
  ASSERT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(Parse(r).at("details").at("causes").at(0).at("message"),
            "The disruption budget web is still being processed by the server.");
  EXPECT_FALSE(Deleted("a"));
}

TEST_F(EvictionTest, TwoBudgetsAreAnError) {
  CreatePod("a");
  const std::string status = R"({"observedGeneration":1,"disruptionsAllowed":1})";
  CreateBudget("one", status);
  CreateBudget("two", status);
  HttpResponse r = Evict("a");
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_EQ(Parse(r).at("message"),
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does "
            "not support.");
  EXPECT_FALSE(Deleted("a"));
}

TEST_F(EvictionTest, PendingAndUnreadyPodsNeedNoDisruption) {
  CreatePod("pending", "");
  CreatePod("unready", "Running", /*ready=*/false);
  CreatePod("ready");
  // Healthy (3 >= 2) but no disruption left for ready pods.
  CreateBudget("web", R"({"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":3,)"
                      R"("desiredHealthy":2,"expectedPods":3})");
  EXPECT_EQ(Evict("pending").status, 201);
  EXPECT_EQ(Evict("unready").status, 201);
  EXPECT_EQ(Evict("ready").status, 429);
  EXPECT_TRUE(Deleted("pending"));
  EXPECT_TRUE(Deleted("unready"));
  EXPECT_FALSE(Deleted("ready"));
}

}  // namespace
}  // namespace converge
