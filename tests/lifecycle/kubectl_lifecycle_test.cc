// The real kubectl against `converge apiserver` plus a `converge controller-manager` process:
// cascading deletion (background, foreground, orphan), namespace deletion, and a Job run to
// completion with `kubectl wait` (the test plays the kubelet).
#include <gtest/gtest.h>

#include <cstdio>

#include "lifecycle_test_util.h"
#include "testing/kubectl.h"
#include "testing/process.h"

namespace converge::lifecycle_test {
namespace {

using testing::CommandResult;
using testing::Kubectl;

class KubectlLifecycleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::ServerProcess();
    ASSERT_TRUE(server_->Start());
    controllers_ = new testing::Process();
    ASSERT_TRUE(
        controllers_->Start({CONVERGE_BINARY, "controller-manager", "--kubeconfig",
                             server_->kubeconfig_path(), "--leader-elect", "false", "--controllers",
                             "garbagecollector,namespace,job,ttl-after-finished"},
                            server_->data_dir() + "/controller-manager.log"));
    cache_ = new testing::TempDir();
  }
  static void TearDownTestSuite() {
    controllers_->Stop();
    delete controllers_;
    delete server_;
    delete cache_;
  }
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available()) << "kubectl is not on PATH";
    kubectl_ = std::make_unique<Kubectl>(server_->kubeconfig_path(), cache_->path());
    client_ = ClientFor(*server_);
    ASSERT_NE(client_, nullptr);
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "kl-";
    for (char c : name) ns_ += std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
    ns_ = ns_.substr(0, 60);
    CommandResult r = K({"create", "namespace", ns_}, false);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  CommandResult K(std::vector<std::string> args, bool namespaced = true,
                  const std::string& stdin_data = "") {
    if (namespaced) args.insert(args.begin(), {"-n", ns_});
    return kubectl_->Run(args, stdin_data);
  }

  // A Deployment owning a ReplicaSet that owns a ConfigMap (hand-made references; the
  // Deployment and ReplicaSet controllers are not part of this suite).
  void CreateChain(const std::string& name) {
    CommandResult r = K({"create", "deployment", name, "--image=nginx", "--replicas=0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto dep = client_->Get(kDeployments, {ns_, name});
    ASSERT_TRUE(dep.ok()) << dep.status().ToString();
    api::Object rs = ReplicaSetObject(name + "-rs", name, {OwnerRef(*dep)});
    auto created = client_->Create(kReplicaSets, ns_, rs);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    auto cm =
        client_->Create(kConfigMaps, ns_, ConfigMapObject(name + "-cm", {OwnerRef(*created)}));
    ASSERT_TRUE(cm.ok()) << cm.status().ToString();
  }

  static testing::ServerProcess* server_;
  static testing::Process* controllers_;
  static testing::TempDir* cache_;
  std::unique_ptr<Kubectl> kubectl_;
  std::unique_ptr<client::RestClient> client_;
  std::string ns_;
};

testing::ServerProcess* KubectlLifecycleTest::server_ = nullptr;
testing::Process* KubectlLifecycleTest::controllers_ = nullptr;
testing::TempDir* KubectlLifecycleTest::cache_ = nullptr;

TEST_F(KubectlLifecycleTest, DeleteDeploymentCascadeBackground) {
  CreateChain("bg");
  CommandResult r = K({"delete", "deployment", "bg", "--cascade=background"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "deployment.apps \"bg\" deleted\n");
  EXPECT_TRUE(WaitFor([&] {
    return Gone(*client_, kReplicaSets, {ns_, "bg-rs"}) &&
           Gone(*client_, kConfigMaps, {ns_, "bg-cm"});
  })) << "the dependents were not collected";
}

TEST_F(KubectlLifecycleTest, DeleteDeploymentCascadeForegroundWaitsForDependents) {
  CreateChain("fg");
  // kubectl waits until the Deployment is gone, which needs the collector to delete the
  // ReplicaSet (and its ConfigMap) first.
  CommandResult r = K({"delete", "deployment", "fg", "--cascade=foreground", "--timeout=90s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Gone(*client_, kDeployments, {ns_, "fg"}));
  EXPECT_TRUE(Gone(*client_, kReplicaSets, {ns_, "fg-rs"}));
  EXPECT_TRUE(Gone(*client_, kConfigMaps, {ns_, "fg-cm"}));
}

TEST_F(KubectlLifecycleTest, DeleteDeploymentCascadeOrphanKeepsDependents) {
  CreateChain("or");
  CommandResult r = K({"delete", "deployment", "or", "--cascade=orphan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(WaitFor([&] { return Gone(*client_, kDeployments, {ns_, "or"}); }));
  auto rs = client_->Get(kReplicaSets, {ns_, "or-rs"});
  ASSERT_TRUE(rs.ok()) << "orphaned, not deleted";
  EXPECT_EQ(rs->owner_references(), nullptr);
  EXPECT_TRUE(Exists(*client_, kConfigMaps, {ns_, "or-cm"}));
  r = K({"get", "replicaset", "or-rs", "-o", "jsonpath={.metadata.ownerReferences}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(KubectlLifecycleTest, DeleteNamespace) {
  CreateChain("inside");
  ASSERT_EQ(K({"create", "configmap", "plain", "--from-literal=k=v"}).exit_code, 0);
  ASSERT_EQ(K({"create", "secret", "generic", "s", "--from-literal=k=v"}).exit_code, 0);
  CommandResult r = K({"delete", "namespace", ns_, "--timeout=90s"}, false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "namespace \"" + ns_ + "\" deleted\n");
  r = K({"get", "namespace", ns_}, false);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("NotFound"), std::string::npos) << r.err;
}

TEST_F(KubectlLifecycleTest, CreateJobAndWaitForCompletion) {
  CommandResult r = K({"create", "job", "hello", "--image=busybox", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job.batch/hello created\n");
  auto waiter = kubectl_->Start(
      {"-n", ns_, "wait", "--for=condition=complete", "job/hello", "--timeout=90s"});
  // Play the kubelet: the pod runs and exits 0.
  std::vector<api::Object> pods;
  ASSERT_TRUE(WaitFor([&] {
    client::ListOptions o;
    o.label_selector = "batch.kubernetes.io/job-name=hello";
    auto list = client_->List(kPods, ns_, o);
    if (!list.ok() || list->items.empty()) return false;
    pods = list->items;
    return true;
  }));
  ASSERT_EQ(pods.size(), 1u);
  api::Object pod = pods[0];
  json::object& st = api::EnsureObject(pod.mutable_doc(), "status");
  st["phase"] = "Succeeded";
  auto updated = client_->UpdateStatus(kPods, pod);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  ASSERT_TRUE(waiter->WaitFor("condition met", std::chrono::seconds(90)));
  CommandResult done = waiter->Stop();
  EXPECT_NE(done.out.find("job.batch/hello condition met"), std::string::npos) << done.out;
  r = K({"get", "job", "hello", "-o", "jsonpath={.status.succeeded}"});
  EXPECT_EQ(r.out, "1");
}

}  // namespace
}  // namespace converge::lifecycle_test
